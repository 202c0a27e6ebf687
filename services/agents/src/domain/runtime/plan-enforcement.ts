import { sql } from '@agentyard/db';
import { PLAN_ENFORCEMENT_JOB, QUEUES, type PlanEnforcementJob, type QueueSet } from '@agentyard/queue';
import type { RuntimeContext } from './privileged/runtime-context.ts';

/**
 * The lifecycle job queued when a user's subscription changes, and again when a grace period ends.
 * Each running agent the user's plan no longer covers (beyond its agent limit, larger than its size,
 * past the per-user cap; the newest first) gets `graceMs` to run on, its end on the agent for its
 * owner to read; once it has passed, the agent is stopped with the reason the owner sees (its
 * state kept: it starts again when the plan allows). Agents the plan covers again lose their end.
 * An owner picks which agents stay by stopping or deleting others before the end: the next run
 * counts again. Idempotent; an agent busy with another operation fails the job, retried with backoff.
 */
export async function enforcePlan(
  context: Pick<RuntimeContext, 'allowance' | 'runtime' | 'db'>,
  queues: QueueSet,
  userId: string,
  graceMs: number,
): Promise<string> {
  const { db } = context;
  const beyond = await context.allowance.beyondPlan(userId);
  let covered = db
    .updateTable('agents')
    .set({ stops_beyond_plan_at: null })
    .where('user_id', '=', userId)
    .where('stops_beyond_plan_at', 'is not', null);
  if (beyond.length) covered = covered.where('id', 'not in', beyond);
  await covered.execute();
  if (!beyond.length) return 'every agent within the plan';
  await db
    .updateTable('agents')
    .set({ stops_beyond_plan_at: sql<Date>`now() + ${`${graceMs} milliseconds`}::interval` })
    .where('id', 'in', beyond)
    .where('stops_beyond_plan_at', 'is', null)
    .execute();
  const marked = await db
    .selectFrom('agents')
    .select(['id', 'stops_beyond_plan_at'])
    .where('id', 'in', beyond)
    .execute();
  const now = Date.now();
  let stopped = 0;
  const waiting: number[] = [];
  for (const { id, stops_beyond_plan_at } of marked) {
    const at = new Date(stops_beyond_plan_at!).getTime();
    if (at > now) waiting.push(at);
    else if (await context.runtime.stopBeyondPlan(id)) stopped++;
  }
  if (waiting.length) {
    const next = Math.min(...waiting);
    // One job per user and end: however many changes mark agents, the end is looked at once.
    await queues.add(QUEUES.lifecycle, PLAN_ENFORCEMENT_JOB, { userId } satisfies PlanEnforcementJob, {
      jobId: `enforce-plan-${userId}-${next}`,
      delay: next - now,
      attempts: 5,
      backoff: { type: 'exponential', delay: 5000 },
    });
  }
  return `stopped ${stopped} of ${beyond.length} beyond the plan; ${waiting.length} in their grace period`;
}
