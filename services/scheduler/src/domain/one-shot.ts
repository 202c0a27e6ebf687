import { randomUUID } from 'node:crypto';
import { sql } from '@agentyard/db';
import { AgentGatewayError } from '@agentyard/agent-gateway';
import { UnrecoverableError, type Job } from '@agentyard/queue';
import {
  failureMessage,
  sendPrompt,
  taskToDeliver,
  type DeliveryContext,
  type DeliveryOutcome,
} from './privileged/delivery.ts';
import { agentTakesPrompts } from './missed-runs.ts';
import { clearInFlight, NOT_SENT_AGAIN, recordRun, recordTaskStatus, stoppedMidDelivery } from './run-records.ts';
import { PAUSED_MESSAGE } from './spend-pause.ts';
import type { OneShotJobData } from './timers.ts';

/** A delivery whose request may have reached the agent: replaying it could run the prompt twice. */
export const deliveryUnknown = (error: unknown) =>
  error instanceof AgentGatewayError && error.status === undefined && /timed out/.test(error.message);

/**
 * A one-shot task's firing at its runAt. Delivered, it is done: disabled and kept (with its run).
 * A delivery refused or never connected is retried with backoff; one that timed out, or whose
 * worker stopped while it was under way (the agent may have taken it), is not replayed. A task
 * disabled, deleted or moved to another time meanwhile is not delivered.
 */
export async function deliverOneShot(ctx: DeliveryContext, job: Job<OneShotJobData>): Promise<DeliveryOutcome> {
  const due = new Date(job.data.due);
  const task = await taskToDeliver(ctx.db, job.data.taskId);
  if (!task?.enabled || task.run_at?.getTime() !== due.getTime()) return 'skipped-disabled';
  if (task.last_delivered_due && task.last_delivered_due.getTime() >= due.getTime()) return 'skipped-already-delivered';
  // Claimed as a batch claims its tasks, by this attempt alone: a second job for the same firing (a
  // reconcile racing the first) waits out this one's claim and then finds the task done. A failed
  // attempt lets go, so its retry claims again.
  const claimant = `${job.id}:${randomUUID()}`;
  const claimed = await ctx.db
    .updateTable('scheduled_tasks')
    .set({ claimed_by: claimant, claim_expires_at: sql`now() + ${ctx.timeoutMs * 2} * interval '1 millisecond'` })
    .where('id', '=', task.id)
    .where('run_at', '=', due)
    .where('enabled', '=', true)
    .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claim_expires_at', '<', sql<Date>`now()`)]))
    .executeTakeFirst();
  if (claimed.numUpdatedRows === 0n) throw new Error('another job holds this firing');
  const startedAt = new Date();
  // Done either way: the task switches off with its run row, in one transaction.
  const finish = (
    status: 'delivered' | 'ran-late' | 'failed' | 'missed' | 'skipped-no-credits',
    error: string | null,
  ) =>
    ctx.db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('scheduled_tasks')
        .set({
          enabled: false,
          next_run: null,
          claimed_by: null,
          claim_expires_at: null,
          ...(error === null
            ? { last_run: sql`now()`, last_delivered_due: due, last_error: null, failed_attempts: 0 }
            : { last_error: error, last_error_at: sql`now()` }),
          updated_at: sql`now()`,
        })
        .where('id', '=', task.id)
        .where('run_at', '=', due)
        .executeTakeFirst();
      if (done.numUpdatedRows === 0n) return;
      await recordRun(trx, { taskId: task.id, userId: task.user_id, due, status, startedAt, error });
      await recordTaskStatus(trx, task.id, status, { countsFailure: true, failureLimit: ctx.failureLimit });
    });
  // An earlier attempt's worker stopped while delivering it: the agent may have it.
  if (await stoppedMidDelivery(ctx.db, task.id, due)) {
    await finish('failed', NOT_SENT_AGAIN);
    return 'skipped-already-delivered';
  }
  // Missed, by the same rules as a recurring task's firing (missed-runs.ts): never silently.
  if (!agentTakesPrompts(task.agent_status)) {
    await finish('missed', `the agent was ${task.agent_status} at its due time`);
    return 'skipped-disabled';
  }
  const late = job.attemptsMade === 0 && startedAt.getTime() - due.getTime() > ctx.missedGraceMs;
  if (late && task.missed_run_policy === 'skip') {
    await finish('missed', 'the platform was not running at its due time (missed-run policy skip)');
    return 'skipped-disabled';
  }
  if ((await ctx.pause.pausedAmong([task.user_id])).size) {
    await finish('skipped-no-credits', PAUSED_MESSAGE);
    return 'skipped-paused';
  }
  try {
    await sendPrompt(ctx, task, () => ctx.markInFlight({ taskId: task.id, userId: task.user_id, due }));
  } catch (error) {
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (deliveryUnknown(error) || lastAttempt || error instanceof UnrecoverableError) {
      await finish(
        'failed',
        deliveryUnknown(error)
          ? `${failureMessage(error)}; the agent may have taken it, so it is not sent again`
          : failureMessage(error),
      );
      return 'skipped-disabled';
    }
    await clearInFlight(ctx.db, task.id, due);
    await ctx.db
      .updateTable('scheduled_tasks')
      .set({
        last_error: failureMessage(error),
        last_error_at: sql`now()`,
        failed_attempts: sql`failed_attempts + 1`,
        claimed_by: null,
        claim_expires_at: null,
      })
      .where('id', '=', task.id)
      .where('claimed_by', '=', claimant)
      .execute();
    throw error;
  }
  await finish(late ? 'ran-late' : 'delivered', null);
  await ctx.followTurns([{ taskId: task.id, due }]);
  return 'delivered';
}
