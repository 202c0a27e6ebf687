import { Type } from 'typebox';
import { Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { NextCursor, PageQueryFields } from './pagination.ts';
import { route } from './route.ts';

// ── Scheduled tasks (spec 4.7) ─────────────────────────────────────────────────────────────────
export const ScheduledTask = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  cronSchedule: Type.String(),
  prompt: Type.String(),
  enabled: Type.Boolean(),
  lastRun: Nullable(IsoDate),
  nextRun: Nullable(IsoDate),
  agentId: Uuid,
  createdAt: IsoDate,
  updatedAt: IsoDate,
});
const TaskName = Type.String({ minLength: 1, maxLength: 200 });
const CronSchedule = Type.String({ minLength: 1, maxLength: 200 });
const Prompt = Type.String({ minLength: 1, maxLength: 20_000 });
const Description = Nullable(Type.String({ maxLength: 4000 }));
export const ScheduledTaskQuery = Type.Object({ agentId: Type.Optional(Uuid), ...PageQueryFields });
/** `count`: the tasks on this page; `nextCursor`: the next page's cursor, null on the last. */
export const ScheduledTaskList = Type.Object({ tasks: Type.Array(ScheduledTask), count: Type.Integer({ minimum: 0 }), nextCursor: NextCursor });
export const ScheduledTaskCreateBody = Type.Object(
  {
    name: TaskName,
    cronSchedule: CronSchedule,
    prompt: Prompt,
    agentId: Uuid,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
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
  },
  { additionalProperties: false },
);
export const ScheduledTaskDeleteBody = Type.Object({ taskId: Uuid }, { additionalProperties: false });
export const ScheduledTaskDeleted = Type.Object({ success: Type.Literal(true), taskId: Uuid });

// ── Heartbeats (spec 4.6) ──────────────────────────────────────────────────────────────────────
/** An agent row id, or the user's runtime instance id. */
const AgentRef = Type.String({ minLength: 1, maxLength: 128 });
/** A whole number of minutes, hours or days. */
export const HeartbeatFrequency = Type.String({ pattern: '^[1-9][0-9]{0,4}[mhd]$' });
export const Heartbeat = Type.Object({
  frequency: Type.String(),
  enabled: Type.Boolean(),
  lastHeartbeat: Nullable(IsoDate),
  nextHeartbeat: Nullable(IsoDate),
});
export const HeartbeatQuery = Type.Object({ agentId: AgentRef });
export const HeartbeatView = Type.Object({ heartbeat: Heartbeat });
export const HeartbeatSaveBody = Type.Object(
  {
    agentId: AgentRef,
    frequency: Type.Optional(HeartbeatFrequency),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const HeartbeatSaved = Type.Object({ heartbeat: Type.Object({ ...Heartbeat.properties, lastUpdated: IsoDate }) });
export const HeartbeatRemoved = Type.Object({ success: Type.Literal(true) });

/** A heartbeat's agent and frequency, in the interface's words. */
const HEARTBEAT_BAD_REQUEST = {
  missing: { agentId: 'agentId required' },
  invalid: { agentId: 'agentId required', frequency: 'frequency must be a whole number followed by m, h or d, e.g. 30m, 3h, 1d' },
};

export const schedulingRoutes = {
  listTasks: route({
    method: 'GET',
    url: '/api/scheduled-tasks',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    summary: "The user's scheduled prompts, newest first, optionally for one agent; pages of `limit` (default 50, at most 100) from `cursor`",
    schema: { querystring: ScheduledTaskQuery, response: { 200: ScheduledTaskList, ...Errors } },
  }),
  createTask: route({
    method: 'POST',
    url: '/api/scheduled-tasks',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: { missing: { '*': 'Missing required fields: name, cronSchedule, prompt, agentId' } },
    summary: "Schedule a prompt to one of the user's agents on a 5- or 6-field cron (400 SCHEDULE_TOO_FREQUENT under the plan's minimum interval, 429 SCHEDULED_TASK_LIMIT at the per-user cap)",
    schema: { body: ScheduledTaskCreateBody, response: { 201: ScheduledTask, ...Errors } },
  }),
  updateTask: route({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    service: 'scheduler',
    surfaces: ['web'],
    auth: 'user',
    badRequest: { missing: { taskId: 'taskId is required' } },
    summary: 'Change a scheduled prompt; disabling stops it firing',
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
