import { createHash } from 'node:crypto';
import type { JobsOptions, Queue } from '@agentyard/queue';

/** How a firing's delivery is retried: attempts, exponential backoff, bounded history. */
export interface DeliveryPolicy { attempts: number; retryDelayMs: number }

export const PROMPT_JOB = 'scheduled-prompt';
export const HEARTBEAT_JOB = 'heartbeat';

export interface PromptJobData { taskId: string }
export interface HeartbeatJobData { userId: string; agentRef: string }

function jobOptions(policy: DeliveryPolicy): JobsOptions {
  return {
    attempts: policy.attempts,
    backoff: { type: 'exponential', delay: policy.retryDelayMs },
    removeOnComplete: { age: 3600, count: 20_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 20_000 },
  };
}

/** One BullMQ job scheduler per enabled task (id = task id), firing on its cron in UTC. */
export async function scheduleTask(queue: Queue, task: { id: string; cronSchedule: string }, policy: DeliveryPolicy): Promise<void> {
  const data: PromptJobData = { taskId: task.id };
  await queue.upsertJobScheduler(task.id, { pattern: task.cronSchedule, tz: 'UTC' }, { name: PROMPT_JOB, data, opts: jobOptions(policy) });
}

export async function unscheduleTask(queue: Queue, taskId: string): Promise<void> {
  await queue.removeJobScheduler(taskId);
}

/** The scheduler id of a heartbeat: fixed length whatever the agent reference holds. */
export function heartbeatTimerId(userId: string, agentRef: string): string {
  return `hb-${createHash('sha256').update(`${userId}\u0000${agentRef}`).digest('hex').slice(0, 40)}`;
}

/**
 * Fires every `everyMs` starting at `firstAt`. The old scheduler is removed first: BullMQ keeps an
 * unchanged interval's cadence otherwise, and the first beat must be at the answered `nextHeartbeat`.
 */
export async function scheduleHeartbeat(queue: Queue, beat: HeartbeatJobData, everyMs: number, firstAt: Date, policy: DeliveryPolicy): Promise<void> {
  const id = heartbeatTimerId(beat.userId, beat.agentRef);
  await queue.removeJobScheduler(id);
  await queue.upsertJobScheduler(id, { every: everyMs, startDate: firstAt }, { name: HEARTBEAT_JOB, data: beat, opts: jobOptions(policy) });
}

export async function unscheduleHeartbeat(queue: Queue, beat: HeartbeatJobData): Promise<void> {
  await queue.removeJobScheduler(heartbeatTimerId(beat.userId, beat.agentRef));
}

/** Every scheduler id on a queue, page by page. */
export async function timerIds(queue: Queue): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let start = 0; ; start += 1000) {
    const page = await queue.getJobSchedulers(start, start + 999, true);
    for (const scheduler of page) if (scheduler.key) ids.add(scheduler.key);
    if (page.length < 1000) return ids;
  }
}
