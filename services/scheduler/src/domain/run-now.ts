import { sql } from '@agentyard/db';
import type { Job } from '@agentyard/queue';
import { failureMessage, sendPrompt, type DeliveryContext, type DeliveryOutcome } from './privileged/delivery.ts';
import { agentTakesPrompts } from './missed-runs.ts';
import { deliveryUnknown } from './one-shot.ts';
import { clearInFlight, NOT_SENT_AGAIN, recordTaskStatus, stoppedMidDelivery } from './run-records.ts';
import { PAUSED_MESSAGE } from './spend-pause.ts';
import type { RunNowJobData } from './timers.ts';

/**
 * A run asked for by hand: its pending row (committed before its job was added) is delivered once,
 * counted like any run. A delivery refused or never connected is retried; one that timed out, or
 * whose worker stopped while it was under way (the agent may have taken it), is not replayed.
 */
export async function deliverRunNow(ctx: DeliveryContext, job: Job<RunNowJobData>): Promise<DeliveryOutcome> {
  const run = await ctx.db
    .selectFrom('scheduled_task_runs as r')
    .innerJoin('scheduled_tasks as t', 't.id', 'r.task_id')
    .innerJoin('agents as a', 'a.id', 't.agent_id')
    .select([
      'r.id as run_id',
      'r.status',
      'r.due_at',
      't.id',
      't.user_id',
      't.name',
      't.prompt',
      'a.id as agent_id',
      'a.gateway_url',
      'a.hooks_token_sealed',
      'a.status as agent_status',
    ])
    .where('r.id', '=', job.data.runId)
    .executeTakeFirst();
  // Its task was deleted since (the row went with it), or Redis took the job while the row was taken back.
  if (!run) return 'skipped-disabled';
  if (run.status !== 'pending') return 'skipped-already-delivered';
  const startedAt = new Date();
  const settle = async (status: 'delivered' | 'failed' | 'missed' | 'skipped-no-credits', error: string | null) => {
    const paused = await ctx.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('scheduled_task_runs')
        .set({ status, started_at: startedAt, finished_at: status === 'delivered' ? null : new Date(), error })
        .where('id', '=', run.run_id)
        .execute();
      if (status === 'delivered')
        await trx
          .updateTable('scheduled_tasks')
          .set({ last_run: sql`now()`, last_error: null })
          .where('id', '=', run.id)
          .execute();
      else
        await trx
          .updateTable('scheduled_tasks')
          .set({ last_error: error, last_error_at: sql`now()` })
          .where('id', '=', run.id)
          .execute();
      return recordTaskStatus(trx, run.id, status, { countsFailure: true, failureLimit: ctx.failureLimit });
    });
    if (paused) await ctx.notices.tasksPaused([run.id]);
  };
  // An earlier attempt's worker stopped while delivering it: the agent may have it.
  if (await stoppedMidDelivery(ctx.db, run.id, run.due_at)) {
    await settle('failed', NOT_SENT_AGAIN);
    return 'skipped-already-delivered';
  }
  if (!agentTakesPrompts(run.agent_status)) {
    await settle('missed', `the agent was ${run.agent_status} when the run was asked for`);
    return 'skipped-disabled';
  }
  if ((await ctx.pause.pausedAmong([run.user_id])).size) {
    await settle('skipped-no-credits', PAUSED_MESSAGE);
    return 'skipped-paused';
  }
  try {
    await sendPrompt(ctx, run, () => ctx.markInFlight({ taskId: run.id, userId: run.user_id, due: run.due_at }));
  } catch (error) {
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (!deliveryUnknown(error) && !lastAttempt) {
      await clearInFlight(ctx.db, run.id, run.due_at);
      throw error;
    }
    await settle(
      'failed',
      deliveryUnknown(error)
        ? `${failureMessage(error)}; the agent may have taken it, so it is not sent again`
        : failureMessage(error),
    );
    return 'skipped-disabled';
  }
  await settle('delivered', null);
  await ctx.followTurns([{ taskId: run.id, due: run.due_at }]);
  return 'delivered';
}
