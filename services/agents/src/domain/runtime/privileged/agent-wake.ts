import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { QUEUES, WAKE_AGENT_JOB, wakeJobId, type QueueSet, type WakeAgentJob } from '@agentyard/queue';
import { AgentErrors } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import type { HibernationContext } from './hibernation-context.ts';
import { loadAgent } from './lifecycle-status.ts';

/** Boot time (measured, else the estimate) plus the sweep's period and a margin: how far ahead of a due prompt a stopped agent is started. */
export const wakeLeadMs = (context: HibernationContext, agentId: string) =>
  Math.ceil((context.bootMs.get(agentId) ?? context.bootEstimateMs) * 1.5) + context.sweepEveryMs + 5000;

const markAwake = (db: SystemDb, agentId: string) =>
  db
    .updateTable('agents')
    .set({ status: 'running', hibernation: null, suspended_at: null, updated_at: sql<Date>`now()` })
    .where('id', '=', agentId)
    .returningAll()
    .executeTakeFirstOrThrow();

/** Resumes a paused agent or starts a stopped one, in its wake's turn, and answers it awake. */
export async function resume(context: HibernationContext, agentId: string): Promise<AgentRow> {
  const { db, driver, activity, log } = context;
  return context.exclusiveWake(agentId, async () => {
    const agent = await loadAgent(db, agentId);
    if (!agent) throw AgentErrors.notFound();
    // Woken by another caller meanwhile, or its owner stopped or repaired it: nothing to do here.
    if (agent.status !== 'suspended') return agent;
    if (!agent.container_id || !agent.gateway_url) throw AgentErrors.wakeFailed();
    const began = performance.now();
    // What the engine says, not what the row says: a configuration rebuilt meanwhile left a stopped container.
    const info = await driver.inspect(agent.container_id);
    if (!info) throw AgentErrors.wakeFailed();
    let from = 'running';
    if (info.state === 'paused' && driver.unpause) {
      from = 'paused';
      // Still holding its memory, like a running agent: a new plan's size waits for its next start, not a resume.
      await driver.unpause(agent.container_id);
    } else if (info.state !== 'running') {
      from = 'stopped';
      await context.bringUp(agentId);
      // Read again: a plan of another size made a new container, recorded on the row.
      const up = await loadAgent(db, agentId);
      if (!up?.gateway_url || !(await context.readiness.waitUntilReady(up.gateway_url))) throw AgentErrors.wakeFailed();
      const took = Math.round(performance.now() - began);
      context.bootMs.set(agentId, took);
      await context.redis.hset(context.bootKey, agentId, took).catch(() => undefined);
    }
    const woken = await markAwake(db, agentId);
    await activity.touch(agentId);
    log.info?.({ agentId, from, ms: Math.round(performance.now() - began) }, 'hibernating agent woken');
    return woken;
  });
}

/** A wake ahead of a due prompt, as a lifecycle job: one per hibernation, shared with the scheduler's. */
export async function queueWake(queues: QueueSet, agent: AgentRow): Promise<string> {
  const data: WakeAgentJob = { agentId: agent.id };
  const since = agent.suspended_at ? new Date(agent.suspended_at).getTime() : 0;
  await queues.get(QUEUES.lifecycle).add(WAKE_AGENT_JOB, data, {
    jobId: wakeJobId(agent.id, since),
    attempts: 1,
    removeOnComplete: { age: 60 },
    removeOnFail: true,
  });
  return 'wake queued';
}
