import { metrics } from '@agentyard/observability';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { runAgentTurn, wakeAgent } from '@agentyard/agent-gateway';
import { UnrecoverableError, type Job } from '@agentyard/queue';
import type { DeliverySlots } from './delivery-slots.ts';
import { frequencyMs } from './frequency.ts';
import type { HooksTokens } from './hooks-tokens.ts';
import { PAUSED_MESSAGE, type SpendPause } from './spend-pause.ts';
import type { HeartbeatJobData, PromptRetryJobData } from './timers.ts';

export interface DeliveryContext {
  db: SystemDb;
  tokens: HooksTokens;
  slots: DeliverySlots;
  timeoutMs: number;
  pause: SpendPause;
}

export type DeliveryOutcome = 'delivered' | 'skipped-disabled' | 'skipped-already-delivered' | 'skipped-paused';

/** The firing a scheduler's job stands for: BullMQ sets `prevMillis` to its due time. */
export const dueTimeOf = (job: Job) => new Date(job.opts.prevMillis ?? job.timestamp);

/** How late a firing's first attempt started against its due time (`cron`, `heartbeat`). */
export function recordFiringLag(job: Job, kind: string): void {
  if (job.attemptsMade === 0 && job.processedOn) metrics.schedulerFiringLag().observe({ kind }, Math.max(0, job.processedOn - dueTimeOf(job).getTime()) / 1000);
}

export interface PromptToDeliver {
  id: string;
  user_id: string;
  name: string;
  prompt: string;
  agent_id: string;
  gateway_url: string | null;
  hooks_token_sealed: string | null;
}

/** One scheduled prompt to its agent (`POST /hooks/agent`), in one of the worker's delivery slots. */
export function sendPrompt(ctx: DeliveryContext, task: PromptToDeliver): Promise<unknown> {
  return ctx.slots.run(async () => {
    const target = ctx.tokens.target({ id: task.agent_id, gateway_url: task.gateway_url, hooks_token_sealed: task.hooks_token_sealed });
    return runAgentTurn(target, { message: task.prompt, name: task.name, sessionKey: `scheduled:${task.id}`, timeoutSeconds: Math.ceil(ctx.timeoutMs / 1000) }, ctx.timeoutMs);
  });
}

/** A failed delivery as recorded on the task: the message, never more than 500 characters. */
export const failureMessage = (error: unknown) => String((error as Error)?.message ?? error).slice(0, 500);

/**
 * Retries one task's firing that failed in its batch. A disabled or deleted task, or a firing
 * already delivered, is not delivered again. A failure is recorded on the task and thrown, so
 * BullMQ retries it with backoff. `nextRun` is the batches' to move, not the retry's.
 */
export async function retryScheduledPrompt(ctx: DeliveryContext, job: Job<PromptRetryJobData>): Promise<DeliveryOutcome> {
  const due = new Date(job.data.due);
  const task = await ctx.db
    .selectFrom('scheduled_tasks')
    .innerJoin('agents', 'agents.id', 'scheduled_tasks.agent_id')
    .select([
      'scheduled_tasks.id',
      'scheduled_tasks.user_id',
      'scheduled_tasks.name',
      'scheduled_tasks.prompt',
      'scheduled_tasks.enabled',
      'scheduled_tasks.last_delivered_due',
      'agents.id as agent_id',
      'agents.gateway_url',
      'agents.hooks_token_sealed',
    ])
    .where('scheduled_tasks.id', '=', job.data.taskId)
    .executeTakeFirst();
  if (!task?.enabled) return 'skipped-disabled';
  if (task.last_delivered_due && task.last_delivered_due.getTime() >= due.getTime()) return 'skipped-already-delivered';
  if ((await ctx.pause.pausedAmong([task.user_id])).size) {
    await ctx.db.updateTable('scheduled_tasks').set({ last_error: PAUSED_MESSAGE, last_error_at: sql`now()` }).where('id', '=', task.id).execute();
    return 'skipped-paused';
  }
  try {
    await sendPrompt(ctx, task);
  } catch (error) {
    await ctx.db
      .updateTable('scheduled_tasks')
      .set({
        last_error: failureMessage(error),
        last_error_at: sql`now()`,
        failed_attempts: sql`failed_attempts + 1`,
      })
      .where('id', '=', task.id)
      .execute();
    throw error;
  }
  await ctx.db
    .updateTable('scheduled_tasks')
    .set({ last_run: sql`now()`, last_delivered_due: due, last_error: null, failed_attempts: 0 })
    .where('id', '=', task.id)
    .where((eb) => eb.or([eb('last_delivered_due', 'is', null), eb('last_delivered_due', '<', due)]))
    .execute();
  return 'delivered';
}

/** Wakes the agent for one heartbeat (`POST /hooks/wake`) and moves `lastHeartbeat`/`nextHeartbeat` on. */
export async function deliverHeartbeat(ctx: DeliveryContext, job: Job<HeartbeatJobData>): Promise<DeliveryOutcome> {
  const due = dueTimeOf(job);
  const beat = await ctx.db
    .selectFrom('heartbeats')
    .leftJoin('agents', 'agents.id', 'heartbeats.agent_id')
    .select([
      'heartbeats.user_id',
      'heartbeats.agent_ref',
      'heartbeats.enabled',
      'heartbeats.frequency',
      'heartbeats.last_heartbeat',
      'agents.id as agent_id',
      'agents.gateway_url',
      'agents.hooks_token_sealed',
    ])
    .where('heartbeats.user_id', '=', job.data.userId)
    .where('heartbeats.agent_ref', '=', job.data.agentRef)
    .executeTakeFirst();
  if (!beat?.enabled) return 'skipped-disabled';
  if (beat.last_heartbeat && beat.last_heartbeat.getTime() >= due.getTime()) return 'skipped-already-delivered';
  const where = { user_id: beat.user_id, agent_ref: beat.agent_ref };
  if ((await ctx.pause.pausedAmong([beat.user_id])).size) {
    await ctx.db.updateTable('heartbeats').set({ last_error: PAUSED_MESSAGE }).where('user_id', '=', where.user_id).where('agent_ref', '=', where.agent_ref).execute();
    return 'skipped-paused';
  }
  try {
    // A heartbeat keyed by the runtime instance id has no agent row, so no hooks token to wake it with.
    if (!beat.agent_id) throw new UnrecoverableError('runtime instance has no hooks endpoint on record');
    const target = ctx.tokens.target({ id: beat.agent_id, gateway_url: beat.gateway_url, hooks_token_sealed: beat.hooks_token_sealed });
    await ctx.slots.run(() => wakeAgent(target, 'Heartbeat', ctx.timeoutMs));
  } catch (error) {
    await ctx.db
      .updateTable('heartbeats')
      .set({ last_error: failureMessage(error) })
      .where('user_id', '=', where.user_id)
      .where('agent_ref', '=', where.agent_ref)
      .execute();
    throw error;
  }
  await ctx.db
    .updateTable('heartbeats')
    .set({
      last_heartbeat: sql`now()`,
      next_heartbeat: new Date(due.getTime() + frequencyMs(beat.frequency)),
      last_error: null,
    })
    .where('user_id', '=', where.user_id)
    .where('agent_ref', '=', where.agent_ref)
    .execute();
  return 'delivered';
}
