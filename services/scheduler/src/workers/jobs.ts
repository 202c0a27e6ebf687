import { defineJobs, QUEUES, type Job } from '@agentyard/queue';
import { deliverHeartbeat, recordFiringLag, retryScheduledPrompt } from '../domain/privileged/delivery.ts';
import { settleTurn } from '../domain/privileged/turn-outcomes.ts';
import { deliverOneShot } from '../domain/one-shot.ts';
import { deliverBatch, fanOutFiring, type FiringContext } from '../domain/prompt-firings.ts';
import { deliverRunNow } from '../domain/run-now.ts';
import {
  CRON_FIRING_JOB,
  HEARTBEAT_JOB,
  ONE_SHOT_JOB,
  PROMPT_BATCH_JOB,
  PROMPT_RETRY_JOB,
  RUN_NOW_JOB,
  RUN_PURGE_JOB,
  TURN_OUTCOME_JOB,
  type CronFiringJobData,
  type HeartbeatJobData,
  type OneShotJobData,
  type PromptBatchJobData,
  type PromptRetryJobData,
  type RunNowJobData,
  type TurnOutcomeJobData,
} from '../domain/timers.ts';

/** Every job the scheduler's workers run: scheduled prompts (firings, their batches and retries, runs) and heartbeats. */
export function schedulerJobs(ctx: FiringContext, purge: () => Promise<{ deleted: number }>) {
  return defineJobs({
    [CRON_FIRING_JOB]: {
      queue: QUEUES.scheduledPrompts,
      run: (job: Job<CronFiringJobData>) => {
        recordFiringLag(job, 'cron');
        return fanOutFiring(ctx, job);
      },
    },
    [PROMPT_BATCH_JOB]: {
      queue: QUEUES.scheduledPrompts,
      run: (job: Job<PromptBatchJobData>) => deliverBatch(ctx, job),
    },
    [PROMPT_RETRY_JOB]: {
      queue: QUEUES.scheduledPrompts,
      run: (job: Job<PromptRetryJobData>) => retryScheduledPrompt(ctx, job),
    },
    [ONE_SHOT_JOB]: {
      queue: QUEUES.scheduledPrompts,
      run: (job: Job<OneShotJobData>) => {
        recordFiringLag(job, 'one-shot');
        return deliverOneShot(ctx, job);
      },
    },
    [RUN_NOW_JOB]: { queue: QUEUES.scheduledPrompts, run: (job: Job<RunNowJobData>) => deliverRunNow(ctx, job) },
    [TURN_OUTCOME_JOB]: {
      queue: QUEUES.scheduledPrompts,
      run: (job: Job<TurnOutcomeJobData>, token) => settleTurn(ctx, job, token),
    },
    [RUN_PURGE_JOB]: { queue: QUEUES.scheduledPrompts, run: (_job: Job<Record<string, never>>) => purge() },
    [HEARTBEAT_JOB]: {
      queue: QUEUES.heartbeats,
      run: (job: Job<HeartbeatJobData>) => {
        recordFiringLag(job, 'heartbeat');
        return deliverHeartbeat(ctx, job);
      },
    },
  });
}
