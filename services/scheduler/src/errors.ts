import { HttpError } from '@agentyard/http';

/** Every error the scheduler service answers with, named once. */
export const SchedulerErrors = {
  invalidCron: (detail: string) => new HttpError(400, `Invalid cron schedule: ${detail}`),
  invalidTimeZone: (name: string) =>
    new HttpError(400, `Invalid timezone "${name.slice(0, 64)}": expected an IANA zone such as Europe/Berlin`),
  missingSchedule: () => new HttpError(400, 'Missing required fields: name, cronSchedule, prompt, agentId'),
  cronOrRunAt: () =>
    new HttpError(400, 'Pass either cronSchedule (a repeating task) or runAt (a one-shot task), not both'),
  runAtPast: () => new HttpError(400, 'runAt must be in the future'),
  runAtTooFar: () => new HttpError(400, 'runAt must be within a year from now'),
  blankField: (field: string) => new HttpError(400, `${field} must not be blank`),
  agentNotFound: () => new HttpError(404, 'Agent not found'),
  taskNotFound: () => new HttpError(404, 'Task not found'),
  taskLimit: (limit: number) =>
    new HttpError(
      429,
      `Scheduled task limit reached: at most ${limit} per user; delete one first`,
      'SCHEDULED_TASK_LIMIT',
      { limit },
    ),
  tooFrequent: (what: string, gapSeconds: number, plan: string, minimumSeconds: number) =>
    new HttpError(
      400,
      `${what} fires every ${gapSeconds} s at its closest; the ${plan} plan allows at most one firing every ${minimumSeconds} s`,
      'SCHEDULE_TOO_FREQUENT',
      {
        minimumIntervalSeconds: minimumSeconds,
      },
    ),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
};
