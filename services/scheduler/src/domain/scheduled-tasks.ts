import {
  decodeCursor,
  lockForTransaction,
  pageOf,
  pastPosition,
  positionAt,
  sql,
  type Selectable,
  type ScheduledTasksTable,
  type UserTx,
} from '@agentyard/db';
import type { Queue } from '@agentyard/queue';
import { SchedulerErrors } from '../errors.ts';
import { nextFiring, normalizeCron } from './cron.ts';
import { cronInUse, lockCrons } from './cron-locks.ts';
import { checkCronInterval, type SchedulingCaller, type SchedulingLimits } from './firing-limits.ts';
import { scheduleCron, scheduleOneShot, unscheduleCron, type CronTimer, type DeliveryPolicy } from './timers.ts';
import { timeZoneOf } from './zones.ts';
import type { Static } from 'typebox';
import type { ScheduledTaskCreateBody, ScheduledTaskUpdateBody } from '@agentyard/proto-schemas';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toTask = (row: Selectable<ScheduledTasksTable>) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  cronSchedule: row.cron_schedule,
  prompt: row.prompt,
  enabled: row.enabled,
  lastRun: iso(row.last_run),
  nextRun: iso(row.next_run),
  agentId: row.agent_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  timezone: row.timezone,
  runAt: iso(row.run_at),
  missedRunPolicy: row.missed_run_policy,
  overlapPolicy: row.overlap_policy,
  lastError: row.last_error,
  pausedReason: row.paused_reason,
  lastStatus: row.last_status,
  consecutiveFailures: row.consecutive_failures,
});

interface Timers {
  queue: Queue;
  policy: DeliveryPolicy;
}
/** What creating and changing tasks needs besides the transaction: the expressions' timers and the user's limits. */
export interface Scheduling {
  timers: Timers;
  limits: SchedulingLimits;
}

function nonBlank(value: string, field: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw SchedulerErrors.blankField(field);
  return trimmed;
}

/** One page of the user's tasks (optionally one agent's), newest first: (created_at, id) descending. */
export async function listTasks(trx: UserTx, page: { agentId?: string; limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'uuid');
  if (page.cursor !== undefined && !after) throw SchedulerErrors.invalidCursor();
  let query = trx.selectFrom('scheduled_tasks').selectAll().select(positionAt('created_at').as('page_at'));
  if (page.agentId) query = query.where('agent_id', '=', page.agentId);
  if (after) query = query.where(pastPosition('created_at', 'id', after, 'desc', 'uuid'));
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const { rows: tasks, nextCursor } = pageOf(rows, page.limit, (row) => ({ at: row.page_at, id: row.id }));
  return { tasks: tasks.map(toTask), nextCursor };
}

// The timer's job scheduler is changed inside the transaction, before commit (a Redis failure
// rolls the row back), under the timer's lock (cron-locks.ts).

/** After a task stopped firing on `timer` (under its lock): its scheduler goes when no enabled task uses it. */
async function cronStopped(trx: UserTx, timers: Timers, timer: CronTimer): Promise<void> {
  if (!(await cronInUse(trx, timer))) await unscheduleCron(timers.queue, timer);
}

const YEAR_MS = 365 * 86_400_000;

/** When a task fires: a cron read in a zone, or once at `runAt`. */
interface Schedule {
  cronSchedule: string | null;
  runAt: Date | null;
  timezone: string;
}

/** A one-shot time: in the future, within a year. */
function oneShotTime(text: string): Date {
  const at = new Date(text);
  if (at.getTime() <= Date.now()) throw SchedulerErrors.runAtPast();
  if (at.getTime() > Date.now() + YEAR_MS) throw SchedulerErrors.runAtTooFar();
  return at;
}

/** The schedule a request asks for over the task's current one: a cron or a runAt, never both. */
function scheduleOf(input: { cronSchedule?: string; runAt?: string; timezone?: string }, current?: Schedule): Schedule {
  if (input.cronSchedule !== undefined && input.runAt !== undefined) throw SchedulerErrors.cronOrRunAt();
  const timezone = input.timezone === undefined ? (current?.timezone ?? 'UTC') : timeZoneOf(input.timezone);
  if (input.cronSchedule !== undefined)
    return { cronSchedule: normalizeCron(input.cronSchedule), runAt: null, timezone };
  if (input.runAt !== undefined) return { cronSchedule: null, runAt: oneShotTime(input.runAt), timezone };
  if (!current) throw SchedulerErrors.missingSchedule();
  return { ...current, timezone };
}

/** The schedule's next firing from now: the cron's in its zone, or the one-shot time. */
const nextOf = (schedule: Schedule) =>
  schedule.cronSchedule === null ? schedule.runAt! : nextFiring(schedule.cronSchedule, new Date(), schedule.timezone);
const timerOf = (schedule: Schedule): CronTimer | null =>
  schedule.cronSchedule === null ? null : { cronSchedule: schedule.cronSchedule, timezone: schedule.timezone };
const sameTimer = (a: CronTimer | null, b: CronTimer | null) =>
  a !== null && b !== null && a.cronSchedule === b.cronSchedule && a.timezone === b.timezone;

/**
 * A new task, refused (429) once the user has `tasksPerUser`: the count runs under a lock per user
 * held to commit, so two creations at once cannot both see room for one.
 */
export async function createTask(
  trx: UserTx,
  caller: SchedulingCaller,
  { timers, limits }: Scheduling,
  input: Static<typeof ScheduledTaskCreateBody>,
) {
  const schedule = scheduleOf(input);
  const next = nextOf(schedule);
  if (schedule.cronSchedule !== null) await checkCronInterval(trx, caller, limits, schedule.cronSchedule);
  const agent = await trx.selectFrom('agents').select('id').where('id', '=', input.agentId).executeTakeFirst();
  if (!agent) throw SchedulerErrors.agentNotFound();
  await lockForTransaction(trx, `scheduled-tasks of ${caller.userId}`);
  const { n } = await trx
    .selectFrom('scheduled_tasks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  if (Number(n) >= limits.tasksPerUser) throw SchedulerErrors.taskLimit(limits.tasksPerUser);
  const enabled = input.enabled ?? true;
  const row = await trx
    .insertInto('scheduled_tasks')
    .values({
      user_id: caller.userId,
      agent_id: agent.id,
      name: nonBlank(input.name, 'name'),
      description: input.description ?? null,
      cron_schedule: schedule.cronSchedule,
      run_at: schedule.runAt,
      timezone: schedule.timezone,
      ...(input.missedRunPolicy !== undefined && { missed_run_policy: input.missedRunPolicy }),
      ...(input.overlapPolicy !== undefined && { overlap_policy: input.overlapPolicy }),
      prompt: nonBlank(input.prompt, 'prompt'),
      enabled,
      next_run: enabled ? next : null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const timer = timerOf(schedule);
  if (enabled && timer) {
    await lockCrons(trx, timer);
    await scheduleCron(timers.queue, timer, timers.policy);
  } else if (enabled) await scheduleOneShot(timers.queue, row.id, schedule.runAt!, timers.policy);
  return toTask(row);
}

// nextRun is also the firing a task is due for (a firing's batches claim tasks with nextRun at or
// before its due time), so an edit that keeps the task firing on the same timer keeps it.
export async function updateTask(
  trx: UserTx,
  caller: SchedulingCaller,
  { timers, limits }: Scheduling,
  input: Static<typeof ScheduledTaskUpdateBody>,
) {
  scheduleOf(input, { cronSchedule: null, runAt: null, timezone: 'UTC' }); // a bad zone or time is a 400 whoever's the task
  const current = await trx
    .selectFrom('scheduled_tasks')
    .selectAll()
    .where('id', '=', input.taskId)
    .forUpdate()
    .executeTakeFirst();
  if (!current) throw SchedulerErrors.taskNotFound();
  const before: Schedule = { cronSchedule: current.cron_schedule, runAt: current.run_at, timezone: current.timezone };
  const schedule = scheduleOf(input, before);
  const next = nextOf(schedule); // checks a new cron before anything else reads it
  const enabled = input.enabled ?? current.enabled;
  const [oldTimer, newTimer] = [timerOf(before), timerOf(schedule)];
  // A one-shot switched back on fires at a time still ahead (a delivered one needs a new runAt).
  if (enabled && schedule.runAt && input.runAt === undefined && !current.enabled)
    oneShotTime(schedule.runAt.toISOString());
  // A new schedule, or an old one switched back on, meets the plan's minimum interval of today.
  if (newTimer && (input.cronSchedule !== undefined || (enabled && !current.enabled)))
    await checkCronInterval(trx, caller, limits, newTimer.cronSchedule);
  const keepsFiring =
    current.enabled &&
    enabled &&
    (sameTimer(oldTimer, newTimer) ||
      (!newTimer && !oldTimer && schedule.runAt!.getTime() === before.runAt!.getTime()));
  const row = await trx
    .updateTable('scheduled_tasks')
    .set({
      ...(input.name !== undefined && { name: nonBlank(input.name, 'name') }),
      ...(input.description !== undefined && { description: input.description }),
      ...(input.prompt !== undefined && { prompt: nonBlank(input.prompt, 'prompt') }),
      ...(input.missedRunPolicy !== undefined && { missed_run_policy: input.missedRunPolicy }),
      ...(input.overlapPolicy !== undefined && { overlap_policy: input.overlapPolicy }),
      cron_schedule: schedule.cronSchedule,
      run_at: schedule.runAt,
      timezone: schedule.timezone,
      enabled,
      // Switched back on: the failures in a row start again, and the pause's reason goes.
      ...(enabled && !current.enabled && { consecutive_failures: 0, paused_reason: null }),
      next_run: enabled ? (keepsFiring && current.next_run ? current.next_run : next) : null,
      updated_at: sql`now()`,
    })
    .where('id', '=', current.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (keepsFiring) return toTask(row);
  const locked = [...(enabled && newTimer ? [newTimer] : []), ...(current.enabled && oldTimer ? [oldTimer] : [])];
  if (locked.length) await lockCrons(trx, ...locked);
  if (enabled && newTimer) await scheduleCron(timers.queue, newTimer, timers.policy);
  else if (enabled) await scheduleOneShot(timers.queue, row.id, schedule.runAt!, timers.policy);
  if (current.enabled && oldTimer) await cronStopped(trx, timers, oldTimer);
  return toTask(row);
}

export async function deleteTask(trx: UserTx, timers: Timers, taskId: string): Promise<void> {
  const deleted = await trx
    .deleteFrom('scheduled_tasks')
    .where('id', '=', taskId)
    .returning(['id', 'enabled', 'cron_schedule', 'timezone'])
    .executeTakeFirst();
  if (!deleted) throw SchedulerErrors.taskNotFound();
  // A one-shot's job finds no task when it fires: nothing to remove here.
  if (!deleted.enabled || deleted.cron_schedule === null) return;
  const timer = { cronSchedule: deleted.cron_schedule, timezone: deleted.timezone };
  await lockCrons(trx, timer);
  await cronStopped(trx, timers, timer);
}
