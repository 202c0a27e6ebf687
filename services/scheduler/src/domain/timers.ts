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
export const ONE_SHOT_JOB = 'one-shot';
export const RUN_NOW_JOB = 'run-now';
export const HEARTBEAT_JOB = 'heartbeat';
export const TURN_OUTCOME_JOB = 'turn-outcome';
export const RUN_PURGE_JOB = 'run-purge';

/** A cron expression read in a zone: the tasks one job scheduler fires. */
export interface CronTimer {
  cronSchedule: string;
  timezone: string;
}
/** Fired by a cron expression's job scheduler; its due time is the job's `prevMillis`. No `timezone`: UTC (schedulers made before zones). */
export interface CronFiringJobData {
  cronSchedule: string;
  timezone?: string;
}
/** One batch of a firing: claims up to the batch size of the expression's tasks due at `due`. */
export interface PromptBatchJobData {
  cronSchedule: string;
  timezone?: string;
  due: number;
}
/** A one-shot task's single firing at `due` (its runAt). */
export interface OneShotJobData {
  taskId: string;
  due: number;
}
/** A failed delivery of one task's firing, retried with backoff on its own. */
export interface PromptRetryJobData {
  taskId: string;
  due: number;
}
/** A run asked for by hand: its pending run row. */
export interface RunNowJobData {
  runId: string;
}
/** A delivered run whose turn's end, answer and cost are read from the agent after the hooks took it. */
export interface TurnOutcomeJobData {
  taskId: string;
  due: number;
}
export type PromptJobData =
  | CronFiringJobData
  | PromptBatchJobData
  | PromptRetryJobData
  | OneShotJobData
  | RunNowJobData
  | TurnOutcomeJobData
  | Record<string, never>;

/** How a delivered run's turn is followed: looked at every `pollMs` until `turnTimeoutMs` after delivery. */
export interface TurnFollowPolicy {
  pollMs: number;
  turnTimeoutMs: number;
}

/** The timer a firing's job data stands for. */
export const timerOf = (data: { cronSchedule: string; timezone?: string }): CronTimer => ({
  cronSchedule: data.cronSchedule,
  timezone: data.timezone ?? 'UTC',
});
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
// on an expression creates it, the last one to go removes it). An expression is read in its task's
// zone, so the scheduler is per (expression, zone): BullMQ's `tz` follows daylight saving.

/** The scheduler id of a cron expression in a zone: fixed length, no characters BullMQ keys reserve (UTC ones keep their ids of before zones). */
export function cronTimerId({ cronSchedule, timezone }: CronTimer): string {
  return `cron-${createHash('sha256').update(`${timezone}\u0000${cronSchedule}`).digest('hex').slice(0, 40)}`;
}

/** The expression's job scheduler, created unless it exists (it keeps its cadence then). */
export async function scheduleCron(queue: Queue, timer: CronTimer, policy: DeliveryPolicy): Promise<void> {
  const id = cronTimerId(timer);
  if (await queue.getJobScheduler(id)) return;
  const data: CronFiringJobData = { cronSchedule: timer.cronSchedule, timezone: timer.timezone };
  await queue.upsertJobScheduler(
    id,
    { pattern: timer.cronSchedule, tz: timer.timezone },
    { name: CRON_FIRING_JOB, data, opts: jobOptions(policy) },
  );
}

export async function unscheduleCron(queue: Queue, timer: CronTimer): Promise<void> {
  await queue.removeJobScheduler(cronTimerId(timer));
}

/** The batch jobs of one firing, with ids that make a repeated fan-out add nothing twice. */
export function batchJobs(timer: CronTimer, due: number, count: number, policy: DeliveryPolicy) {
  return Array.from({ length: count }, (_, i) => ({
    name: PROMPT_BATCH_JOB,
    data: { cronSchedule: timer.cronSchedule, timezone: timer.timezone, due } satisfies PromptBatchJobData,
    opts: { ...jobOptions(policy), jobId: `batch-${cronTimerId(timer)}-${due}-${i}` },
  }));
}

/** The job id of a one-shot task's firing: adding it again (a reconcile, an edit back) adds nothing. */
export const oneShotJobId = (taskId: string, due: number) => `once-${taskId}-${due}`;

/** A one-shot task's firing, delayed to its runAt. A changed runAt is a new job; the old one finds the task moved on. */
export async function scheduleOneShot(
  queue: Queue,
  taskId: string,
  runAt: Date,
  policy: DeliveryPolicy,
): Promise<void> {
  const due = runAt.getTime();
  const data: OneShotJobData = { taskId, due };
  await queue.add(ONE_SHOT_JOB, data, {
    ...jobOptions(policy),
    delay: Math.max(0, due - Date.now()),
    jobId: oneShotJobId(taskId, due),
  });
}

/** The retry of one task's failed firing: the first attempt failed in its batch, so one fewer here. */
export function retryJob(taskId: string, due: number, policy: DeliveryPolicy) {
  return {
    name: PROMPT_RETRY_JOB,
    data: { taskId, due } satisfies PromptRetryJobData,
    opts: {
      ...jobOptions(policy),
      attempts: policy.attempts - 1,
      delay: policy.retryDelayMs,
      jobId: `retry-${taskId}-${due}`,
    },
  };
}

/** A run by hand, delivered once: its id is the run's, so adding it again adds nothing. */
export function runNowJob(runId: string, policy: DeliveryPolicy) {
  return {
    name: RUN_NOW_JOB,
    data: { runId } satisfies RunNowJobData,
    opts: { ...jobOptions(policy), jobId: `run-now-${runId}` },
  };
}

/**
 * The follow-up of a delivered run, one per run (its id is the run's task and due time): its first
 * look after `pollMs`, then one every `pollMs` while the turn goes on (put back delayed, no attempt
 * spent); its attempts are for errors of its own (the database).
 */
export function turnOutcomeJob(taskId: string, due: number, follow: TurnFollowPolicy) {
  return {
    name: TURN_OUTCOME_JOB,
    data: { taskId, due } satisfies TurnOutcomeJobData,
    opts: {
      jobId: `outcome-${taskId}-${due}`,
      delay: follow.pollMs,
      attempts: 5,
      backoff: { type: 'exponential', delay: follow.pollMs },
      removeOnComplete: { age: 3600, count: 20_000 },
      removeOnFail: { age: 24 * 3600, count: 20_000 },
    },
  };
}

/** The daily purge of run rows older than their owner's plan keeps: one job scheduler on the prompts queue. */
export async function scheduleRunPurge(queue: Queue, everyMs: number): Promise<void> {
  await queue.upsertJobScheduler(
    RUN_PURGE_JOB,
    { every: everyMs },
    { name: RUN_PURGE_JOB, data: {}, opts: { removeOnComplete: 30, removeOnFail: 30 } },
  );
}

/** The scheduler id of a heartbeat: fixed length whatever the agent reference holds. */
export function heartbeatTimerId(userId: string, agentRef: string): string {
  return `hb-${createHash('sha256').update(`${userId}\u0000${agentRef}`).digest('hex').slice(0, 40)}`;
}

/**
 * Fires every `everyMs` starting at `firstAt`. The old scheduler is removed first: BullMQ keeps an
 * unchanged interval's cadence otherwise, and the first beat must be at the answered `nextHeartbeat`.
 */
export async function scheduleHeartbeat(
  queue: Queue,
  beat: HeartbeatJobData,
  everyMs: number,
  firstAt: Date,
  policy: DeliveryPolicy,
): Promise<void> {
  const id = heartbeatTimerId(beat.userId, beat.agentRef);
  await queue.removeJobScheduler(id);
  await queue.upsertJobScheduler(
    id,
    { every: everyMs, startDate: firstAt },
    { name: HEARTBEAT_JOB, data: beat, opts: jobOptions(policy) },
  );
}

export async function unscheduleHeartbeat(queue: Queue, beat: HeartbeatJobData): Promise<void> {
  await queue.removeJobScheduler(heartbeatTimerId(beat.userId, beat.agentRef));
}

/** Every scheduler on a queue by id, with its cron timer if it has a pattern, page by page. */
export async function timers(queue: Queue): Promise<Map<string, CronTimer | undefined>> {
  const found = new Map<string, CronTimer | undefined>();
  for (let start = 0; ; start += 1000) {
    const page = await queue.getJobSchedulers(start, start + 999, true);
    for (const scheduler of page)
      if (scheduler.key)
        found.set(
          scheduler.key,
          scheduler.pattern ? { cronSchedule: scheduler.pattern, timezone: scheduler.tz ?? 'UTC' } : undefined,
        );
    if (page.length < 1000) return found;
  }
}
