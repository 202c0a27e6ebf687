import {
  decodeCursor,
  pageOf,
  pastPosition,
  positionAt,
  sql,
  type ScheduledTaskRunsTable,
  type Selectable,
  type UserTx,
} from '@agentyard/db';
import type { Queue } from '@agentyard/queue';
import { SchedulerErrors } from '../errors.ts';
import { runNowJob, type DeliveryPolicy } from './timers.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toRun = (row: Selectable<ScheduledTaskRunsTable>) => ({
  id: row.id,
  dueAt: row.due_at.toISOString(),
  startedAt: iso(row.started_at),
  finishedAt: iso(row.finished_at),
  status: row.status,
  manual: row.manual,
  reply: row.reply,
  tokens: row.tokens,
  costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
  error: row.error,
});

/** The caller's task, or 404 (row-level security hides everyone else's). */
async function ownTask(trx: UserTx, taskId: string) {
  const task = await trx
    .selectFrom('scheduled_tasks')
    .select(['id', 'user_id'])
    .where('id', '=', taskId)
    .executeTakeFirst();
  if (!task) throw SchedulerErrors.taskNotFound();
  return task;
}

/** One page of a task's runs, newest due time first: (due_at, id) descending. */
export async function listRuns(trx: UserTx, taskId: string, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'uuid');
  if (page.cursor !== undefined && !after) throw SchedulerErrors.invalidCursor();
  await ownTask(trx, taskId);
  let query = trx
    .selectFrom('scheduled_task_runs')
    .selectAll()
    .select(positionAt('due_at').as('page_at'))
    .where('task_id', '=', taskId);
  if (after) query = query.where(pastPosition('due_at', 'id', after, 'desc', 'uuid'));
  const rows = await query
    .orderBy('due_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const { rows: runs, nextCursor } = pageOf(rows, page.limit, (row) => ({ at: row.page_at, id: row.id }));
  return { runs: runs.map(toRun), nextCursor };
}

/**
 * A run by hand: a pending run row, committed, then its job (a job added inside the transaction
 * could run before the commit and find no row). A Redis failure takes the row back and answers 5xx.
 */
export async function runNow(
  asUser: <T>(work: (trx: UserTx) => Promise<T>) => Promise<T>,
  timers: { queue: Queue; policy: DeliveryPolicy },
  taskId: string,
) {
  const run = await asUser(async (trx) => {
    const task = await ownTask(trx, taskId);
    return trx
      .insertInto('scheduled_task_runs')
      .values({
        task_id: task.id,
        user_id: task.user_id,
        due_at: sql`date_trunc('milliseconds', clock_timestamp())`,
        manual: true,
        status: 'pending',
      })
      .returning(['id', 'status'])
      .executeTakeFirstOrThrow();
  });
  const job = runNowJob(run.id, timers.policy);
  try {
    await timers.queue.add(job.name, job.data, job.opts);
  } catch (error) {
    await asUser((trx) => trx.deleteFrom('scheduled_task_runs').where('id', '=', run.id).execute());
    throw error;
  }
  return { run };
}
