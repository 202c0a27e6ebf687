import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { Keyring } from '@agentyard/crypto';
import { openAgentSecret, runAgentTurn, wakeAgent, type HooksTarget } from '@agentyard/agent-gateway';
import { UnrecoverableError, type Job } from '@agentyard/queue';
import { nextFiring } from './cron.ts';
import { frequencyMs } from './frequency.ts';
import type { HeartbeatJobData, PromptJobData } from './timers.ts';

export interface DeliveryContext { db: SystemDb; keyring: Keyring; timeoutMs: number }

export type DeliveryOutcome = 'delivered' | 'skipped-disabled' | 'skipped-already-delivered';

/** The firing a job stands for: BullMQ sets `prevMillis` to the due time of a scheduler's job. */
const dueTimeOf = (job: Job) => new Date(job.opts.prevMillis ?? job.timestamp);

function hooksOf(ctx: DeliveryContext, agent: { id: string; gateway_url: string | null; hooks_token_sealed: string | null }): HooksTarget {
  if (!agent.gateway_url || !agent.hooks_token_sealed) throw new UnrecoverableError('agent has no hooks endpoint on record');
  return { baseUrl: agent.gateway_url, hooksToken: openAgentSecret(ctx.keyring, agent.id, 'hooks-token', agent.hooks_token_sealed) };
}

/**
 * Delivers one firing of a scheduled prompt to the agent (`POST /hooks/agent`). A disabled or
 * deleted task, or a firing already delivered, is not delivered again. A failure is recorded on
 * the task and thrown, so BullMQ retries it with backoff.
 */
export async function deliverScheduledPrompt(ctx: DeliveryContext, job: Job<PromptJobData>): Promise<DeliveryOutcome> {
  const due = dueTimeOf(job);
  const task = await ctx.db.selectFrom('scheduled_tasks').innerJoin('agents', 'agents.id', 'scheduled_tasks.agent_id')
    .select(['scheduled_tasks.id', 'scheduled_tasks.name', 'scheduled_tasks.prompt', 'scheduled_tasks.enabled', 'scheduled_tasks.cron_schedule',
      'scheduled_tasks.last_delivered_due', 'agents.id as agent_id', 'agents.gateway_url', 'agents.hooks_token_sealed'])
    .where('scheduled_tasks.id', '=', job.data.taskId).executeTakeFirst();
  if (!task?.enabled) return 'skipped-disabled';
  if (task.last_delivered_due && task.last_delivered_due.getTime() >= due.getTime()) return 'skipped-already-delivered';
  try {
    const target = hooksOf(ctx, { id: task.agent_id, gateway_url: task.gateway_url, hooks_token_sealed: task.hooks_token_sealed });
    await runAgentTurn(target, { message: task.prompt, name: task.name, sessionKey: `scheduled:${task.id}`, timeoutSeconds: Math.ceil(ctx.timeoutMs / 1000) }, ctx.timeoutMs);
  } catch (error) {
    await ctx.db.updateTable('scheduled_tasks').set({
      last_error: (error as Error).message.slice(0, 500), last_error_at: sql`now()`, failed_attempts: sql`failed_attempts + 1`,
    }).where('id', '=', task.id).execute();
    throw error;
  }
  await ctx.db.updateTable('scheduled_tasks').set({
    last_run: sql`now()`, next_run: nextFiring(task.cron_schedule), last_delivered_due: due, last_error: null, failed_attempts: 0,
  }).where('id', '=', task.id).where((eb) => eb.or([eb('last_delivered_due', 'is', null), eb('last_delivered_due', '<', due)])).execute();
  return 'delivered';
}

/** Wakes the agent for one heartbeat (`POST /hooks/wake`) and moves `lastHeartbeat`/`nextHeartbeat` on. */
export async function deliverHeartbeat(ctx: DeliveryContext, job: Job<HeartbeatJobData>): Promise<DeliveryOutcome> {
  const due = dueTimeOf(job);
  const beat = await ctx.db.selectFrom('heartbeats').leftJoin('agents', 'agents.id', 'heartbeats.agent_id')
    .select(['heartbeats.user_id', 'heartbeats.agent_ref', 'heartbeats.enabled', 'heartbeats.frequency', 'heartbeats.last_heartbeat',
      'agents.id as agent_id', 'agents.gateway_url', 'agents.hooks_token_sealed'])
    .where('heartbeats.user_id', '=', job.data.userId).where('heartbeats.agent_ref', '=', job.data.agentRef).executeTakeFirst();
  if (!beat?.enabled) return 'skipped-disabled';
  if (beat.last_heartbeat && beat.last_heartbeat.getTime() >= due.getTime()) return 'skipped-already-delivered';
  const where = { user_id: beat.user_id, agent_ref: beat.agent_ref };
  try {
    // A heartbeat keyed by the runtime instance id has no agent row, so no hooks token to wake it with.
    if (!beat.agent_id) throw new UnrecoverableError('runtime instance has no hooks endpoint on record');
    await wakeAgent(hooksOf(ctx, { id: beat.agent_id, gateway_url: beat.gateway_url, hooks_token_sealed: beat.hooks_token_sealed }), 'Heartbeat', ctx.timeoutMs);
  } catch (error) {
    await ctx.db.updateTable('heartbeats').set({ last_error: (error as Error).message.slice(0, 500) })
      .where('user_id', '=', where.user_id).where('agent_ref', '=', where.agent_ref).execute();
    throw error;
  }
  await ctx.db.updateTable('heartbeats').set({
    last_heartbeat: sql`now()`, next_heartbeat: new Date(due.getTime() + frequencyMs(beat.frequency)), last_error: null,
  }).where('user_id', '=', where.user_id).where('agent_ref', '=', where.agent_ref).execute();
  return 'delivered';
}
