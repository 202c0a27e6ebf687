import { sql, type Database, type ScheduledRunStatus, type Transaction } from '@agentyard/db';

/** What a delivery under way when its worker stopped is recorded with (failed): the agent may have taken it. */
export const NOT_SENT_AGAIN = 'the scheduler stopped while delivering it; the agent may have taken it, so it is not sent again';

/** One firing's outcome as its run row holds it. */
export interface RunRecord {
  taskId: string;
  userId: string;
  due: Date;
  status: ScheduledRunStatus;
  startedAt: Date | null;
  error: string | null;
  manual?: boolean;
  /** A delivered run whose turn cannot be followed (no gateway token on record) is settled at once. */
  followed?: boolean;
}

/**
 * A firing's run row, written or brought up to date (a retry of the same firing updates its row,
 * never adds one). A delivered run has not finished: the turn it started is the agent's.
 */
export async function recordRun(trx: Transaction<Database>, run: RunRecord): Promise<void> {
  const finishedAt = (run.status === 'delivered' && run.followed !== false) || run.status === 'pending' ? null : new Date();
  await trx
    .insertInto('scheduled_task_runs')
    .values({
      task_id: run.taskId,
      user_id: run.userId,
      due_at: run.due,
      manual: run.manual ?? false,
      status: run.status,
      started_at: run.startedAt,
      finished_at: finishedAt,
      error: run.error,
    })
    .onConflict((oc) => oc.columns(['task_id', 'due_at']).doUpdateSet({ status: run.status, started_at: run.startedAt, finished_at: finishedAt, error: run.error }))
    .execute();
}

/**
 * The task's side of a run: its status, and the failures in a row (a delivered or answered run ends them; a
 * failed one adds one unless it was counted already, as a retry of a failed firing was). At
 * `failureLimit` the task pauses itself and says why; answers whether it just did.
 */
export async function recordTaskStatus(trx: Transaction<Database>, taskId: string, status: ScheduledRunStatus, options: { countsFailure: boolean; failureLimit: number }): Promise<boolean> {
  const reachesLimit = status === 'failed' && options.countsFailure ? sql<boolean>`consecutive_failures + 1 >= ${options.failureLimit}` : sql<boolean>`false`;
  const { rows } = await sql<{ paused: boolean }>`
    update scheduled_tasks set
      last_status = ${status},
      consecutive_failures = case when ${status} in ('delivered', 'answered', 'ran-late') then 0 when ${status === 'failed' && options.countsFailure} then consecutive_failures + 1 else consecutive_failures end,
      enabled = enabled and not ${reachesLimit},
      paused_reason = case when enabled and ${reachesLimit} then ${pausedReason(options.failureLimit)} || coalesce(last_error, '') else paused_reason end,
      next_run = case when ${reachesLimit} then null else next_run end
    where id = ${taskId}
    returning (enabled = false and paused_reason is not null and ${reachesLimit}) as paused`.execute(trx);
  return rows[0]?.paused === true;
}

/** The start of the reason a task paused itself, its last error after it. */
export const pausedReason = (limit: number) => `Paused after ${limit} failed runs in a row; the last: `;
