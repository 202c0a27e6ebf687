import { HttpError } from '@agentyard/http';

/** Every error the scheduler service answers with, named once. */
export const SchedulerErrors = {
  invalidCron: (detail: string) => new HttpError(400, `Invalid cron schedule: ${detail}`),
  blankField: (field: string) => new HttpError(400, `${field} must not be blank`),
  agentNotFound: () => new HttpError(404, 'Agent not found'),
  taskNotFound: () => new HttpError(404, 'Task not found'),
  taskLimit: (limit: number) => new HttpError(429, `Scheduled task limit reached: at most ${limit} per user; delete one first`, 'SCHEDULED_TASK_LIMIT', { limit }),
  tooFrequent: (what: string, gapSeconds: number, plan: string, minimumSeconds: number) =>
    new HttpError(400, `${what} fires every ${gapSeconds} s at its closest; the ${plan} plan allows at most one firing every ${minimumSeconds} s`, 'SCHEDULE_TOO_FREQUENT', {
      minimumIntervalSeconds: minimumSeconds,
    }),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
};
