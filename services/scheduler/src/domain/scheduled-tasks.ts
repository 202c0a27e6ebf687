import { decodeCursor, lockForTransaction, pageOf, pastPosition, positionAt, sql, type Selectable, type ScheduledTasksTable, type UserTx } from '@agentyard/db';
import type { Queue } from '@agentyard/queue';
import { SchedulerErrors } from '../errors.ts';
import { nextFiring, normalizeCron } from './cron.ts';
import { cronInUse, lockCrons } from './cron-locks.ts';
import { checkCronInterval, type SchedulingCaller, type SchedulingLimits } from './firing-limits.ts';
import { scheduleCron, unscheduleCron, type DeliveryPolicy } from './timers.ts';
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

// The expression's job scheduler is changed inside the transaction, before commit (a Redis failure
// rolls the row back), under the expression's lock (cron-locks.ts).

/** After a task stopped firing on `cronSchedule` (under its lock): its scheduler goes when no enabled task uses it. */
async function cronStopped(trx: UserTx, timers: Timers, cronSchedule: string): Promise<void> {
  if (!(await cronInUse(trx, cronSchedule))) await unscheduleCron(timers.queue, cronSchedule);
}

/**
 * A new task, refused (429) once the user has `tasksPerUser`: the count runs under a lock per user
 * held to commit, so two creations at once cannot both see room for one.
 */
export async function createTask(trx: UserTx, caller: SchedulingCaller, { timers, limits }: Scheduling, input: Static<typeof ScheduledTaskCreateBody>) {
  const cronSchedule = normalizeCron(input.cronSchedule);
  const next = nextFiring(cronSchedule);
  await checkCronInterval(trx, caller, limits, cronSchedule);
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
      cron_schedule: cronSchedule,
      prompt: nonBlank(input.prompt, 'prompt'),
      enabled,
      next_run: enabled ? next : null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (enabled) {
    await lockCrons(trx, cronSchedule);
    await scheduleCron(timers.queue, cronSchedule, timers.policy);
  }
  return toTask(row);
}

// nextRun is also the firing a task is due for (a firing's batches claim tasks with nextRun at or
// before its due time), so an edit that keeps the task firing on the same expression keeps it.
export async function updateTask(trx: UserTx, caller: SchedulingCaller, { timers, limits }: Scheduling, input: Static<typeof ScheduledTaskUpdateBody>) {
  const current = await trx.selectFrom('scheduled_tasks').selectAll().where('id', '=', input.taskId).forUpdate().executeTakeFirst();
  if (!current) throw SchedulerErrors.taskNotFound();
  const cronSchedule = input.cronSchedule === undefined ? current.cron_schedule : normalizeCron(input.cronSchedule);
  const next = nextFiring(cronSchedule);
  const enabled = input.enabled ?? current.enabled;
  // A new schedule, or an old one switched back on, meets the plan's minimum interval of today.
  if (input.cronSchedule !== undefined || (enabled && !current.enabled)) await checkCronInterval(trx, caller, limits, cronSchedule);
  const keepsFiring = current.enabled && enabled && cronSchedule === current.cron_schedule;
  const row = await trx
    .updateTable('scheduled_tasks')
    .set({
      ...(input.name !== undefined && { name: nonBlank(input.name, 'name') }),
      ...(input.description !== undefined && { description: input.description }),
      ...(input.prompt !== undefined && { prompt: nonBlank(input.prompt, 'prompt') }),
      cron_schedule: cronSchedule,
      enabled,
      next_run: enabled ? (keepsFiring && current.next_run ? current.next_run : next) : null,
      updated_at: sql`now()`,
    })
    .where('id', '=', current.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (keepsFiring) return toTask(row);
  await lockCrons(trx, ...(enabled ? [cronSchedule] : []), ...(current.enabled ? [current.cron_schedule] : []));
  if (enabled) await scheduleCron(timers.queue, cronSchedule, timers.policy);
  if (current.enabled) await cronStopped(trx, timers, current.cron_schedule);
  return toTask(row);
}

export async function deleteTask(trx: UserTx, timers: Timers, taskId: string): Promise<void> {
  const deleted = await trx.deleteFrom('scheduled_tasks').where('id', '=', taskId).returning(['id', 'enabled', 'cron_schedule']).executeTakeFirst();
  if (!deleted) throw SchedulerErrors.taskNotFound();
  if (!deleted.enabled) return;
  await lockCrons(trx, deleted.cron_schedule);
  await cronStopped(trx, timers, deleted.cron_schedule);
}
