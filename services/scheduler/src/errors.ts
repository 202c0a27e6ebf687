import { HttpError } from '@agentyard/http';

/** Every error the scheduler service answers with, named once. */
export const SchedulerErrors = {
  missingTaskFields: () => new HttpError(400, 'Missing required fields: name, cronSchedule, prompt, agentId'),
  taskIdRequired: () => new HttpError(400, 'taskId is required'),
  invalidCron: (detail: string) => new HttpError(400, `Invalid cron schedule: ${detail}`),
  blankField: (field: string) => new HttpError(400, `${field} must not be blank`),
  agentNotFound: () => new HttpError(404, 'Agent not found'),
  taskNotFound: () => new HttpError(404, 'Task not found'),
  agentIdRequired: () => new HttpError(400, 'agentId required'),
  invalidFrequency: () => new HttpError(400, 'frequency must be a whole number followed by m, h or d, e.g. 30m, 3h, 1d'),
};
