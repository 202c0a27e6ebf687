import { sql, type Database, type Kysely, type ScheduledRunStatus, type Transaction } from '@agentyard/db';
import { groupCommit } from './group-commit.ts';

/** What a delivery under way when its worker stopped is recorded with (failed): the agent may have taken it. */
export const NOT_SENT_AGAIN =
  'the scheduler stopped while delivering it; the agent may have taken it, so it is not sent again';

/** A firing's run to mark in flight: its task, owner and due time. */
export interface InFlightRun {
  taskId: string;
  userId: string;
  due: Date;
}

/**
 * Firings' runs marked in flight, committed before their prompts go: an attempt that comes after a
 * stopped one (its worker killed mid-delivery) then knows the agent may have it, and does not send
 * it again. A run asked for by hand has its pending row already; the others' are written here.
 */
export async function markInFlight(db: Kysely<Database>, runs: readonly InFlightRun[]): Promise<void> {
  if (!runs.length) return;
  await sql`
    insert into scheduled_task_runs (task_id, user_id, due_at, status, started_at)
    select task_id, user_id, due, 'pending', now()
    from unnest(${runs.map((r) => r.taskId)}::uuid[], ${runs.map((r) => r.userId)}::uuid[], ${runs.map((r) => r.due)}::timestamptz[]) as m(task_id, user_id, due)
    on conflict (task_id, due_at) do update set started_at = now() where scheduled_task_runs.status = 'pending'`.execute(
    db,
  );
}

/**
 * `markInFlight` for the deliveries under way, as a group commit: each waits for the statement that
 * holds its mark, so no prompt goes unmarked; under load one statement marks a slot's worth.
 */
export function inFlightMarks(db: Kysely<Database>): (run: InFlightRun) => Promise<void> {
  // One statement may not touch a row twice: a run marked twice in a group is written once.
  return groupCommit((runs: InFlightRun[]) =>
    markInFlight(db, [...new Map(runs.map((run) => [`${run.taskId}/${run.due.getTime()}`, run])).values()]),
  );
}

/** Takes an in-flight mark back: the delivery was refused or never connected, so a retry may send it. */
export async function clearInFlight(db: Kysely<Database>, taskId: string, due: Date): Promise<void> {
  await sql`update scheduled_task_runs set started_at = null where task_id = ${taskId} and due_at = ${due} and status = 'pending'`.execute(
    db,
  );
}

/** Whether an earlier attempt of the firing stopped while delivering it: its run is still pending, and in flight. */
export async function stoppedMidDelivery(db: Kysely<Database>, taskId: string, due: Date): Promise<boolean> {
  const { rows } = await sql<{
    n: number;
  }>`select 1 as n from scheduled_task_runs where task_id = ${taskId} and due_at = ${due} and status = 'pending' and started_at is not null`.execute(
    db,
  );
  return rows.length > 0;
}

/** What a delivery fails with when its run could not be marked in flight: the platform's failure, said without its addresses. */
export const NOT_MARKED =
  'the scheduler could not record the run before sending it (its database did not answer); nothing was sent';

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
  const finishedAt =
    (run.status === 'delivered' && run.followed !== false) || run.status === 'pending' ? null : new Date();
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
    .onConflict((oc) =>
      oc
        .columns(['task_id', 'due_at'])
        .doUpdateSet({ status: run.status, started_at: run.startedAt, finished_at: finishedAt, error: run.error }),
    )
    .execute();
}

/**
 * The task's side of a run: its status, and the failures in a row (a delivered or answered run ends them; a
 * failed one adds one unless it was counted already, as a retry of a failed firing was). At
 * `failureLimit` the task pauses itself and says why; answers whether it just did.
 */
export async function recordTaskStatus(
  trx: Transaction<Database>,
  taskId: string,
  status: ScheduledRunStatus,
  options: { countsFailure: boolean; failureLimit: number },
): Promise<boolean> {
  const reachesLimit =
    status === 'failed' && options.countsFailure
      ? sql<boolean>`consecutive_failures + 1 >= ${options.failureLimit}`
      : sql<boolean>`false`;
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
