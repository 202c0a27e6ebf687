import { createSystemDb } from '@agentyard/db/system';
import { parseKeyring } from '@agentyard/crypto';
import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import { createQueues, QUEUES, redisConnection, startWorker, UnrecoverableError, type Job, type Worker } from '@agentyard/queue';
import { deliveryPolicy, type SchedulerConfig } from './config.ts';
import { deliverHeartbeat, recordFiringLag, retryScheduledPrompt } from './domain/delivery-system.ts';
import { deliverySlots } from './domain/delivery-slots.ts';
import { hooksTokens } from './domain/hooks-tokens.ts';
import { deliverBatch, fanOutFiring, type FiringContext } from './domain/prompt-firings-system.ts';
import { reconcileTimers } from './domain/reconcile-system.ts';
import { spendPause } from './domain/spend-pause.ts';
import {
  CRON_FIRING_JOB,
  PROMPT_BATCH_JOB,
  PROMPT_RETRY_JOB,
  type CronFiringJobData,
  type HeartbeatJobData,
  type PromptBatchJobData,
  type PromptJobData,
  type PromptRetryJobData,
} from './domain/timers.ts';

export interface SchedulerWorkers extends Workers {
  prompts: Worker<PromptJobData>;
  heartbeats: Worker<HeartbeatJobData>;
}

function processPromptJob(ctx: FiringContext, job: Job<PromptJobData>) {
  switch (job.name) {
    case CRON_FIRING_JOB:
      recordFiringLag(job, 'cron');
      return fanOutFiring(ctx, job as Job<CronFiringJobData>);
    case PROMPT_BATCH_JOB:
      return deliverBatch(ctx, job as Job<PromptBatchJobData>);
    case PROMPT_RETRY_JOB:
      return retryScheduledPrompt(ctx, job as Job<PromptRetryJobData>);
    default:
      throw new UnrecoverableError(`unknown scheduled-prompts job ${job.name}`);
  }
}

/**
 * The scheduler's workers: each process runs at most SCHEDULER_CONCURRENCY deliveries at once
 * (spec §8: 10), whichever jobs they belong to; more worker processes scale it out. Job schedulers
 * missing after a crash are put back first.
 */
export async function startWorkers(config: SchedulerConfig, deps: WorkerDeps = {}): Promise<SchedulerWorkers> {
  const log = workerLog('scheduler-worker', config, deps);
  const db = deps.systemDb ?? createSystemDb(config.DATABASE_SYSTEM_URL, { max: Math.max(4, config.SCHEDULER_CONCURRENCY) });
  const policy = deliveryPolicy(config);
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log: log });
  const promptQueue = queues.get(QUEUES.scheduledPrompts);
  // The AI gateway's set of users whose spend is exhausted: read once per batch, never waited on for long.
  const spendRedis = redisConnection(config.REDIS_URL, { maxRetriesPerRequest: 1, commandTimeout: 1000 }, { purpose: 'spend pause', log });
  const ctx: FiringContext = {
    db,
    tokens: hooksTokens(parseKeyring(config.ENCRYPTION_KEYS)),
    slots: deliverySlots(config.SCHEDULER_CONCURRENCY),
    timeoutMs: config.SCHEDULER_DELIVERY_TIMEOUT_MS,
    queue: promptQueue,
    policy,
    batchSize: config.SCHEDULER_BATCH_SIZE,
    pause: spendPause(spendRedis, config.QUEUE_PREFIX),
  };
  try {
    const report = await reconcileTimers(db, { prompts: promptQueue, heartbeats: queues.get(QUEUES.heartbeats) }, policy);
    log.info(report, 'job schedulers reconciled');
  } catch (error) {
    await queues.close();
    spendRedis.disconnect();
    throw error;
  }
  // Jobs, not deliveries: a batch job waits for the process's delivery slots, so a few batches in
  // hand keep the slots busy while the next one is claimed.
  const common = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, concurrency: config.SCHEDULER_CONCURRENCY, log: log };
  const prompts = startWorker(QUEUES.scheduledPrompts, (job: Job<PromptJobData>) => processPromptJob(ctx, job), common);
  const heartbeats = startWorker(
    QUEUES.heartbeats,
    (job: Job<HeartbeatJobData>) => {
      recordFiringLag(job, 'heartbeat');
      return deliverHeartbeat(ctx, job);
    },
    common,
  );
  let closed: Promise<void> | undefined;
  return {
    prompts,
    heartbeats,
    close() {
      closed ??= (async () => {
        await Promise.all([prompts.close(), heartbeats.close()]);
        await queues.close();
        spendRedis.disconnect();
        if (!deps.systemDb) await db.destroy();
      })();
      return closed;
    },
  };
}
