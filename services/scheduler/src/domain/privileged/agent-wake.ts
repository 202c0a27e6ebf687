import type { SystemDb } from '@agentyard/db/system';
import {
  WAKE_AGENT_JOB,
  wakeJobId,
  type AgentActivity,
  type JobWaiter,
  type Queue,
  type WakeAgentJob,
} from '@agentyard/queue';

/**
 * The agent a delivery is about to reach: its activity recorded (a prompt or heartbeat keeps it from
 * hibernating), and a hibernating one woken first, waiting until it is awake: the agents worker does
 * it (it owns the containers), as a lifecycle job whose id names the hibernation, so every prompt
 * and heartbeat due to one agent at once waits for the same wake. An agent that is not suspended
 * (any more) needs nothing.
 */
export function agentWaker(
  db: SystemDb,
  lifecycle: Queue,
  waiter: JobWaiter,
  timeoutMs: number,
  activity: Pick<AgentActivity, 'touch'>,
  turnMs: number,
) {
  return async function reach(agentId: string, status: string): Promise<void> {
    // The turn the delivery starts runs on in the agent after its hooks answer: active until it may end, never paused in it.
    await activity.touch(agentId, Date.now() + turnMs);
    if (status !== 'suspended') return;
    const agent = await db
      .selectFrom('agents')
      .select(['status', 'suspended_at'])
      .where('id', '=', agentId)
      .executeTakeFirst();
    if (agent?.status !== 'suspended') return;
    const since = agent.suspended_at ? new Date(agent.suspended_at).getTime() : 0;
    const data: WakeAgentJob = { agentId };
    await waiter.run(
      lifecycle,
      WAKE_AGENT_JOB,
      data,
      { jobId: wakeJobId(agentId, since), attempts: 1, removeOnComplete: { age: 300 }, removeOnFail: { age: 300 } },
      timeoutMs,
    );
  };
}

export type AgentWaker = ReturnType<typeof agentWaker>;
