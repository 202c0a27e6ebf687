import { Type } from 'typebox';
import { Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { NextCursor, PageQuery, PageQueryFields } from './pagination.ts';
import { route } from './route.ts';

// ── Scheduled tasks ────────────────────────────────────────────────────────────────────────────
/** What happens to runs that fell due while the agent, the scheduler or the platform was down. */
export const MissedRunPolicy = Type.Union([Type.Literal('skip'), Type.Literal('run-once')]);
/** What happens to a run falling due while the previous run's agent turn has not finished. */
export const OverlapPolicy = Type.Union([Type.Literal('skip'), Type.Literal('queue')]);
/** What became of one firing (or a run by hand); `pending`: not delivered yet. */
export const ScheduledRunStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivered'),
  Type.Literal('answered'),
  Type.Literal('failed'),
  Type.Literal('missed'),
  Type.Literal('ran-late'),
  Type.Literal('skipped-overlap'),
  Type.Literal('skipped-no-credits'),
]);
export const ScheduledTask = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  /** Null for a one-shot task (`runAt`). */
  cronSchedule: Nullable(Type.String()),
  prompt: Type.String(),
  enabled: Type.Boolean(),
  lastRun: Nullable(IsoDate),
  nextRun: Nullable(IsoDate),
  agentId: Uuid,
  createdAt: IsoDate,
  updatedAt: IsoDate,
  /** The IANA zone `cronSchedule` is read in. */
  timezone: Type.String(),
  runAt: Nullable(IsoDate),
  missedRunPolicy: MissedRunPolicy,
  overlapPolicy: OverlapPolicy,
  lastError: Nullable(Type.String()),
  /** Why the task switched itself off (the failure limit), until it is enabled again. */
  pausedReason: Nullable(Type.String()),
  /** The status of the task's latest run, null before its first. */
  lastStatus: Nullable(ScheduledRunStatus),
  /** Runs in a row that failed; at SCHEDULE_FAILURE_LIMIT the task pauses itself. */
  consecutiveFailures: Type.Integer({ minimum: 0 }),
});
const TaskName = Type.String({ minLength: 1, maxLength: 200 });
const CronSchedule = Type.String({ minLength: 1, maxLength: 200 });
const Prompt = Type.String({ minLength: 1, maxLength: 20_000 });
const Description = Nullable(Type.String({ maxLength: 4000 }));
/** An IANA time zone name (the service checks it names a zone it knows). */
const TimeZone = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_+\\-/]*$' });
/** Optional on a task: one of a cron and a one-shot time. */
const ScheduleFields = {
  timezone: Type.Optional(TimeZone),
  runAt: Type.Optional(IsoDate),
  missedRunPolicy: Type.Optional(MissedRunPolicy),
  overlapPolicy: Type.Optional(OverlapPolicy),
};
export const ScheduledTaskQuery = Type.Object({ agentId: Type.Optional(Uuid), ...PageQueryFields });
/** `count`: the tasks on this page; `nextCursor`: the next page's cursor, null on the last. */
export const ScheduledTaskList = Type.Object({
  tasks: Type.Array(ScheduledTask),
  count: Type.Integer({ minimum: 0 }),
  nextCursor: NextCursor,
});
export const ScheduledTaskCreateBody = Type.Object(
  {
    name: TaskName,
    cronSchedule: Type.Optional(CronSchedule),
    prompt: Prompt,
    agentId: Uuid,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
    ...ScheduleFields,
  },
  { additionalProperties: false },
);
export const ScheduledTaskUpdateBody = Type.Object(
  {
    taskId: Uuid,
    name: Type.Optional(TaskName),
    description: Type.Optional(Description),
    cronSchedule: Type.Optional(CronSchedule),
    prompt: Type.Optional(Prompt),
    enabled: Type.Optional(Type.Boolean()),
    ...ScheduleFields,
  },
  { additionalProperties: false },
);
export const ScheduledTaskDeleteBody = Type.Object({ taskId: Uuid }, { additionalProperties: false });
export const ScheduledTaskDeleted = Type.Object({ success: Type.Literal(true), taskId: Uuid });

export const ScheduledTaskParams = Type.Object({ taskId: Uuid });
export const ScheduledRun = Type.Object({
  id: Uuid,
  /** The firing's due time (a run by hand: when it was asked for). */
  dueAt: IsoDate,
  startedAt: Nullable(IsoDate),
  finishedAt: Nullable(IsoDate),
  status: ScheduledRunStatus,
  manual: Type.Boolean(),
  /** The agent's answer, its first 4000 characters. */
  reply: Nullable(Type.String()),
  tokens: Nullable(Type.Integer({ minimum: 0 })),
  costUsd: Nullable(Type.Number({ minimum: 0 })),
  error: Nullable(Type.String()),
});
export const ScheduledRunList = Type.Object({ runs: Type.Array(ScheduledRun), nextCursor: NextCursor });
export const ScheduledRunStarted = Type.Object({ run: Type.Object({ id: Uuid, status: ScheduledRunStatus }) });

/** The outbound-email job telling a task's owner it paused itself at the failure limit (the scheduler queues it, the email worker sends it). */
export const SCHEDULED_TASK_PAUSED_MAIL_JOB = 'scheduled-task-paused';
export interface ScheduledTaskPausedMailJob {
  kind: 'scheduled-task-paused';
  taskId: string;
}

// ── Heartbeats ─────────────────────────────────────────────────────────────────────────────────
/** An agent row id, or the user's runtime instance id. */
const AgentRef = Type.String({ minLength: 1, maxLength: 128 });
/** A whole number of minutes, hours or days. */
export const HeartbeatFrequency = Type.String({ pattern: '^[1-9][0-9]{0,4}[mhd]$' });
/** What became of one heartbeat firing: skipped for spent credits, the owner's spend limit, or conversations idle too long (it then pauses). */
export const HeartbeatRunStatus = Type.Union([
  Type.Literal('delivered'),
  Type.Literal('failed'),
  Type.Literal('skipped-no-credits'),
  Type.Literal('skipped-spend-limit'),
  Type.Literal('skipped-idle'),
]);
export const Heartbeat = Type.Object({
  frequency: Type.String(),
  enabled: Type.Boolean(),
  lastHeartbeat: Nullable(IsoDate),
  nextHeartbeat: Nullable(IsoDate),
  lastStatus: Type.Optional(Nullable(HeartbeatRunStatus)),
  /** Why the last firing did not go, or why the heartbeat paused itself. */
  lastError: Type.Optional(Nullable(Type.String())),
});
export const HeartbeatQuery = Type.Object({ agentId: AgentRef });
export const HeartbeatRunsQuery = Type.Object({ agentId: AgentRef, ...PageQueryFields });
export const HeartbeatRun = Type.Object({
  id: Uuid,
  dueAt: IsoDate,
  startedAt: Nullable(IsoDate),
  finishedAt: Nullable(IsoDate),
  status: HeartbeatRunStatus,
  error: Nullable(Type.String()),
});
export const HeartbeatRunList = Type.Object({ runs: Type.Array(HeartbeatRun), nextCursor: NextCursor });
export const HeartbeatView = Type.Object({ heartbeat: Heartbeat });
export const HeartbeatSaveBody = Type.Object(
  {
    agentId: AgentRef,
    frequency: Type.Optional(HeartbeatFrequency),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const HeartbeatSaved = Type.Object({
  heartbeat: Type.Object({ ...Heartbeat.properties, lastUpdated: IsoDate }),
});
export const HeartbeatRemoved = Type.Object({ success: Type.Literal(true) });

/** A heartbeat's agent and frequency, in the interface's words. */
const HEARTBEAT_BAD_REQUEST = {
  missing: { agentId: 'agentId required' },
  invalid: {
    agentId: 'agentId required',
    frequency: 'frequency must be a whole number followed by m, h or d, e.g. 30m, 3h, 1d',
  },
};

export const schedulingRoutes = {
  listTasks: route({
    method: 'GET',
    url: '/api/scheduled-tasks',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    summary:
      "The user's scheduled prompts, newest first, optionally for one agent; pages of `limit` (default 50, at most 100) from `cursor`",
    schema: { querystring: ScheduledTaskQuery, response: { 200: ScheduledTaskList, ...Errors } },
  }),
  createTask: route({
    method: 'POST',
    url: '/api/scheduled-tasks',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: { missing: { '*': 'Missing required fields: name, cronSchedule, prompt, agentId' } },
    summary:
      "Schedule a prompt to one of the user's agents on a 5- or 6-field cron read in `timezone` (IANA, default UTC), or once at `runAt` (within a year) instead of a cron (400 SCHEDULE_TOO_FREQUENT under the plan's minimum interval, 429 SCHEDULED_TASK_LIMIT at the per-user cap)",
    schema: { body: ScheduledTaskCreateBody, response: { 201: ScheduledTask, ...Errors } },
  }),
  updateTask: route({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: { missing: { taskId: 'taskId is required' } },
    summary: 'Change a scheduled prompt (a cron or a `runAt`, zone, policies); disabling stops it firing',
    schema: { body: ScheduledTaskUpdateBody, response: { 200: ScheduledTask, ...Errors } },
  }),
  deleteTask: route({
    method: 'DELETE',
    url: '/api/scheduled-tasks',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: { missing: { taskId: 'taskId is required' } },
    summary: 'Delete a scheduled prompt; it never fires again',
    schema: { body: ScheduledTaskDeleteBody, response: { 200: ScheduledTaskDeleted, ...Errors } },
  }),
  listRuns: route({
    method: 'GET',
    url: '/api/scheduled-tasks/:taskId/runs',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    summary:
      "One task's runs, newest due time first: status, the agent's reply, tokens, cost and error; pages of `limit` (default 50, at most 100) from `cursor`; 404 unless the task is the caller's",
    schema: { params: ScheduledTaskParams, querystring: PageQuery, response: { 200: ScheduledRunList, ...Errors } },
  }),
  runTask: route({
    method: 'POST',
    url: '/api/scheduled-tasks/:taskId/run',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-schedule-run',
    summary:
      "Run a task's prompt now, whatever its schedule (202 with the pending run; it counts like any run); 404 unless the task is the caller's",
    schema: { params: ScheduledTaskParams, response: { 202: ScheduledRunStarted, ...Errors } },
  }),
  getHeartbeat: route({
    method: 'GET',
    url: '/api/heartbeat',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: HEARTBEAT_BAD_REQUEST,
    summary: "An agent's heartbeat setting (defaults when none is saved)",
    schema: { querystring: HeartbeatQuery, response: { 200: HeartbeatView, ...Errors } },
  }),
  saveHeartbeat: route({
    method: 'POST',
    url: '/api/heartbeat',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: HEARTBEAT_BAD_REQUEST,
    summary: "Set an agent's heartbeat; the next one is due now plus the frequency",
    schema: { body: HeartbeatSaveBody, response: { 200: HeartbeatSaved, ...Errors } },
  }),
  listHeartbeatRuns: route({
    method: 'GET',
    url: '/api/heartbeat/runs',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: HEARTBEAT_BAD_REQUEST,
    summary:
      "An agent's heartbeat runs, newest first: delivered, failed, or skipped (credits spent, spend limit reached, conversations idle) with why; pages of `limit` from `cursor`",
    schema: { querystring: HeartbeatRunsQuery, response: { 200: HeartbeatRunList, ...Errors } },
  }),
  deleteHeartbeat: route({
    method: 'DELETE',
    url: '/api/heartbeat',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: HEARTBEAT_BAD_REQUEST,
    summary: "Remove an agent's heartbeat setting",
    schema: { querystring: HeartbeatQuery, response: { 200: HeartbeatRemoved, ...Errors } },
  }),
};
