import { PLAN_ENFORCEMENT_JOB, QUEUES, type PlanEnforcementJob, type QueueSet } from '@agentyard/queue';

/**
 * A user's plan may have changed (a subscription began, changed price or ended): the agents
 * worker is asked to stop the agents the plan no longer covers. Each change queues a job of its
 * own (one deduplicated with a job already running could miss the change); the job is idempotent,
 * so a repeat is harmless.
 */
export async function planMayHaveChanged(queues: QueueSet, userId: string): Promise<void> {
  await queues.add(QUEUES.lifecycle, PLAN_ENFORCEMENT_JOB, { userId } satisfies PlanEnforcementJob);
}
