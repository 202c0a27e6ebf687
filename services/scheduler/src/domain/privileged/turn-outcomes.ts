import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { AgentGatewayError, readTurnOutcome, type TurnOutcome } from '@agentyard/agent-gateway';
import { lookAgainLater, UnrecoverableError, type Job, type Queue } from '@agentyard/queue';
import { recordTaskStatus } from '../run-records.ts';
import {
  runNowJob,
  turnOutcomeJob,
  type DeliveryPolicy,
  type TurnFollowPolicy,
  type TurnOutcomeJobData,
} from '../timers.ts';
import { failureMessage, type DeliveryContext } from './delivery.ts';

/** The agent's answer as a run keeps it: its first 4000 characters. */
export const REPLY_MAX_CHARS = 4000;
/** The AI gateway writes usage rows in batches: a turn that ended this recently may not have its rows yet. */
const USAGE_SETTLE_MS = 15_000;
/** Room either side of a turn for its model calls' usage rows (the agent's clock and the gateway's). */
const USAGE_SLACK_MS = 2000;

/** A delivered run whose turn's outcome cannot be known: it stays delivered, settled (no turn of it holds the next one back), and says why. */
async function settleUnknown(
  ctx: DeliveryContext & { queue: Queue; policy: DeliveryPolicy },
  run: { id: string; task_id: string },
  error: string | null,
): Promise<string> {
  await ctx.db
    .updateTable('scheduled_task_runs')
    .set({ finished_at: new Date(), error })
    .where('id', '=', run.id)
    .where('finished_at', 'is', null)
    .execute();
  await releaseQueuedRuns(ctx, [run.task_id]);
  return 'outcome-unknown';
}

/**
 * Follows delivered runs: one follow-up job per run, added in one call per batch after the runs are
 * recorded. A run whose agent has no gateway token on record (agents from before them) cannot be
 * followed: it is settled as delivered at once, so it never holds the next firing back.
 */
export function turnFollower(db: SystemDb, queue: Queue, follow: TurnFollowPolicy) {
  return async (runs: readonly { taskId: string; due: Date }[]) => {
    if (!runs.length) return;
    const { rows: unfollowable } = await sql<{ task_id: string; due_at: Date }>`
      update scheduled_task_runs r set finished_at = now()
      from scheduled_tasks t, agents a
      where t.id = r.task_id and a.id = t.agent_id and a.gateway_token_sealed is null and r.finished_at is null
        and (r.task_id, r.due_at) in (select * from unnest(${runs.map((run) => run.taskId)}::uuid[], ${runs.map((run) => run.due)}::timestamptz[]))
      returning r.task_id, r.due_at`.execute(db);
    const settled = new Set(unfollowable.map((row) => `${row.task_id}/${row.due_at.getTime()}`));
    const followed = runs.filter((run) => !settled.has(`${run.taskId}/${run.due.getTime()}`));
    if (followed.length)
      await queue.addBulk(followed.map((run) => turnOutcomeJob(run.taskId, run.due.getTime(), follow)));
  };
}

/**
 * Unfinished-run test: a run of the task whose turn the agent may still be taking (delivered, not
 * settled, within the turn timeout). A run whose follow-up never settled it stops counting then.
 */
export const turnInProgress = (taskId: ReturnType<typeof sql.ref>, turnTimeoutMs: number) =>
  sql<boolean>`exists (select 1 from scheduled_task_runs b where b.task_id = ${taskId} and b.finished_at is null and b.status in ('delivered', 'ran-late')
    and b.started_at > now() - ${turnTimeoutMs} * interval '1 millisecond')`;

/**
 * Runs that wait for the previous turn (overlapPolicy `queue`): the oldest of each task whose turn is
 * no longer in progress is handed to a run job (its id is the run's, so handing it twice adds nothing).
 */
export async function releaseQueuedRuns(
  ctx: DeliveryContext & { queue: Queue; policy: DeliveryPolicy },
  taskIds: readonly string[],
): Promise<number> {
  if (!taskIds.length) return 0;
  const { rows } = await sql<{ id: string }>`
    select distinct on (r.task_id) r.id from scheduled_task_runs r
    where r.task_id = any(${taskIds}::uuid[]) and r.finished_at is null and r.status = 'pending' and r.started_at is null and not r.manual
      and not ${turnInProgress(sql.ref('r.task_id'), ctx.follow.turnTimeoutMs)}
    order by r.task_id, r.due_at`.execute(ctx.db);
  if (rows.length) await ctx.queue.addBulk(rows.map((row) => runNowJob(row.id, ctx.policy)));
  return rows.length;
}

/**
 * A delivered run's outcome, read from its agent: the turn the hooks started runs in the session
 * `scheduled:<task id>`, and its end is the agent's last message there. Answered, the run keeps the
 * reply, and the tokens and cost of the agent's model calls through the AI gateway during the turn
 * (usage rows name the agent, not the session: calls of the agent's other sessions at the same time
 * count too). A turn not ended within SCHEDULER_TURN_TIMEOUT_MS of its delivery is a failed run; one
 * whose transcript cannot be read stays delivered and says why. A settled run releases a run that
 * waited for it.
 */
export async function settleTurn(
  ctx: DeliveryContext & { queue: Queue; policy: DeliveryPolicy },
  job: Job<TurnOutcomeJobData>,
  token: string | undefined,
): Promise<string> {
  const run = await ctx.db
    .selectFrom('scheduled_task_runs as r')
    .innerJoin('scheduled_tasks as t', 't.id', 'r.task_id')
    .innerJoin('agents as a', 'a.id', 't.agent_id')
    .select([
      'r.id',
      'r.task_id',
      'r.status',
      'r.started_at',
      'r.finished_at',
      'a.id as agent_id',
      'a.gateway_url',
      'a.gateway_token_sealed',
    ])
    .where('r.task_id', '=', job.data.taskId)
    .where('r.due_at', '=', new Date(job.data.due))
    .executeTakeFirst();
  if (!run) return 'gone';
  if ((run.status !== 'delivered' && run.status !== 'ran-late') || run.finished_at) return 'settled-already';
  const startedAt = run.started_at ?? new Date(job.data.due);
  // Looked at again (not an attempt spent) until the turn may last no longer.
  const lastLook = Date.now() >= startedAt.getTime() + ctx.follow.turnTimeoutMs;
  const later = () => lookAgainLater(job, token, ctx.follow.pollMs);
  // No gateway on record any more: the hooks took the prompt, nothing more is known.
  if (!run.gateway_url || !run.gateway_token_sealed) return settleUnknown(ctx, run, null);
  let outcome: TurnOutcome;
  try {
    outcome = await readTurnOutcome(
      ctx.tokens.gateway({
        id: run.agent_id,
        gateway_url: run.gateway_url,
        gateway_token_sealed: run.gateway_token_sealed,
      }),
      `scheduled:${run.task_id}`,
      startedAt,
      {
        timeoutMs: ctx.timeoutMs,
      },
    );
  } catch (error) {
    // The gateway refused (4xx: its tools are off), or it stayed out of reach or failing (a 5xx: the
    // gateway's tool failed while the session was written) until the last look: the outcome is unknown, not a failure of the task.
    const refused = error instanceof AgentGatewayError && error.status !== undefined && error.status < 500;
    if (!lastLook && !refused && !(error instanceof UnrecoverableError)) return later();
    return settleUnknown(ctx, run, `its answer could not be read from the agent: ${failureMessage(error)}`);
  }
  if (!outcome.finished) {
    if (!lastLook) return later();
    outcome = {
      finished: true,
      ok: false,
      error: `the agent's turn did not end within ${Math.round(ctx.follow.turnTimeoutMs / 1000)} s`,
      endedAt: null,
    };
  }
  const endedAt = outcome.endedAt && outcome.endedAt.getTime() >= startedAt.getTime() ? outcome.endedAt : new Date();
  const [from, to] = [new Date(startedAt.getTime() - USAGE_SLACK_MS), new Date(endedAt.getTime() + USAGE_SLACK_MS)];
  // The agent's usage index is by day: the day bounds make the lookup use it. Calls every provider failed served nothing of the turn.
  const { rows } = await sql<{ calls: number; tokens: number; cost: string | null }>`
    select count(*)::int as calls, coalesce(sum(total_tokens), 0)::int as tokens, sum(cost_usd)::text as cost from usage_events
    where agent_id = ${run.agent_id} and occurred_at >= ${from} and occurred_at <= ${to} and outcome = 'served'
      and day between (${from}::timestamptz at time zone 'UTC')::date - 1 and (${to}::timestamptz at time zone 'UTC')::date + 1`.execute(
    ctx.db,
  );
  const usage = rows[0]!;
  if (outcome.ok && usage.calls === 0 && Date.now() - endedAt.getTime() < USAGE_SETTLE_MS && !lastLook) return later();
  const status = outcome.ok ? (run.status === 'ran-late' ? 'ran-late' : 'answered') : 'failed';
  const error = outcome.ok ? null : outcome.error;
  const paused = await ctx.db.transaction().execute(async (trx) => {
    const settled = await trx
      .updateTable('scheduled_task_runs')
      .set({
        status,
        finished_at: endedAt,
        reply: outcome.ok ? outcome.reply.slice(0, REPLY_MAX_CHARS) : null,
        tokens: usage.calls ? usage.tokens : null,
        cost_usd: usage.cost,
        error,
      })
      .where('id', '=', run.id)
      .where('finished_at', 'is', null)
      .executeTakeFirst();
    if (settled.numUpdatedRows === 0n) return false;
    if (error)
      await trx
        .updateTable('scheduled_tasks')
        .set({ last_error: error, last_error_at: sql`now()` })
        .where('id', '=', run.task_id)
        .execute();
    return recordTaskStatus(trx, run.task_id, status, { countsFailure: true, failureLimit: ctx.failureLimit });
  });
  if (paused) await ctx.notices.tasksPaused([run.task_id]);
  await releaseQueuedRuns(ctx, [run.task_id]);
  return status;
}
