import { createHash } from 'node:crypto';
import type { JobsOptions, Queue } from '@agentyard/queue';

/** How a firing's delivery is retried: attempts, exponential backoff, bounded history. */
export interface DeliveryPolicy {
  attempts: number;
  retryDelayMs: number;
}

export const CRON_FIRING_JOB = 'cron-firing';
export const PROMPT_BATCH_JOB = 'prompt-batch';
export const PROMPT_RETRY_JOB = 'prompt-retry';
export const HEARTBEAT_JOB = 'heartbeat';

/** Fired by a cron expression's job scheduler; its due time is the job's `prevMillis`. */
export interface CronFiringJobData {
  cronSchedule: string;
}
/** One batch of a firing: claims up to the batch size of the expression's tasks due at `due`. */
export interface PromptBatchJobData {
  cronSchedule: string;
  due: number;
}
/** A failed delivery of one task's firing, retried with backoff on its own. */
export interface PromptRetryJobData {
  taskId: string;
  due: number;
}
export type PromptJobData = CronFiringJobData | PromptBatchJobData | PromptRetryJobData;
export interface HeartbeatJobData {
  userId: string;
  agentRef: string;
}

function jobOptions(policy: DeliveryPolicy): JobsOptions {
  return {
    attempts: policy.attempts,
    backoff: { type: 'exponential', delay: policy.retryDelayMs },
    removeOnComplete: { age: 3600, count: 20_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 20_000 },
  };
}

// Scheduled prompts: one BullMQ job scheduler per distinct cron expression, not per task. A
// scheduler per task puts one delayed job per task in Redis, and 10,000 tasks on `* * * * *` make
// 10,000 jobs promoted in the same second, each moved to active, finished and its next iteration
// scheduled by its own Lua scripts, and each delivered after its own row read and row write: that
// per-job overhead, on a machine whose cores also run PostgreSQL, Redis and the agents, was the fire
// lag (p99 26 s on bench/scheduler). One job per expression and firing fans out into batch jobs of
// SCHEDULER_BATCH_SIZE tasks, each claimed with one statement and recorded with one; the scheduler
// is still created, changed and removed in the request that changes a task (the first enabled task
// on an expression creates it, the last one to go removes it). All tasks are in UTC.

/** The scheduler id of a cron expression: fixed length, no characters BullMQ keys reserve. */
export function cronTimerId(cronSchedule: string): string {
  return `cron-${createHash('sha256').update(`UTC\u0000${cronSchedule}`).digest('hex').slice(0, 40)}`;
}

/** The expression's job scheduler, created unless it exists (it keeps its cadence then). */
export async function scheduleCron(queue: Queue, cronSchedule: string, policy: DeliveryPolicy): Promise<void> {
  const id = cronTimerId(cronSchedule);
  if (await queue.getJobScheduler(id)) return;
  const data: CronFiringJobData = { cronSchedule };
  await queue.upsertJobScheduler(id, { pattern: cronSchedule, tz: 'UTC' }, { name: CRON_FIRING_JOB, data, opts: jobOptions(policy) });
}

export async function unscheduleCron(queue: Queue, cronSchedule: string): Promise<void> {
  await queue.removeJobScheduler(cronTimerId(cronSchedule));
}

/** The batch jobs of one firing, with ids that make a repeated fan-out add nothing twice. */
export function batchJobs(cronSchedule: string, due: number, count: number, policy: DeliveryPolicy) {
  return Array.from({ length: count }, (_, i) => ({
    name: PROMPT_BATCH_JOB,
    data: { cronSchedule, due } satisfies PromptBatchJobData,
    opts: { ...jobOptions(policy), jobId: `batch-${cronTimerId(cronSchedule)}-${due}-${i}` },
  }));
}

/** The retry of one task's failed firing: the first attempt failed in its batch, so one fewer here. */
export function retryJob(taskId: string, due: number, policy: DeliveryPolicy) {
  return {
    name: PROMPT_RETRY_JOB,
    data: { taskId, due } satisfies PromptRetryJobData,
    opts: { ...jobOptions(policy), attempts: policy.attempts - 1, delay: policy.retryDelayMs, jobId: `retry-${taskId}-${due}` },
  };
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

/** Every scheduler on a queue by id, with its cron pattern if it has one, page by page. */
export async function timers(queue: Queue): Promise<Map<string, string | undefined>> {
  const found = new Map<string, string | undefined>();
  for (let start = 0; ; start += 1000) {
    const page = await queue.getJobSchedulers(start, start + 999, true);
    for (const scheduler of page) if (scheduler.key) found.set(scheduler.key, scheduler.pattern ?? undefined);
    if (page.length < 1000) return found;
  }
}
