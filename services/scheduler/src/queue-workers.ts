import { createSystemDb, type SystemDb } from '@agentyard/db/system';
import { parseKeyring } from '@agentyard/crypto';
import { createQueues, QUEUES, startWorker, type Job, type Worker } from '@agentyard/queue';
import { deliveryPolicy, type SchedulerConfig } from './config.ts';
import { deliverHeartbeat, deliverScheduledPrompt, type DeliveryContext } from './domain/delivery-system.ts';
import { reconcileTimers } from './domain/reconcile-system.ts';
import type { HeartbeatJobData, PromptJobData } from './domain/timers.ts';

type Log = { error(obj: object, msg: string): void; info(obj: object, msg: string): void };

export interface SchedulerWorkers {
  prompts: Worker<PromptJobData>;
  heartbeats: Worker<HeartbeatJobData>;
  close(): Promise<void>;
}

/**
 * The scheduler's workers: each runs at most SCHEDULER_CONCURRENCY deliveries at once (spec §8:
 * 10); more worker processes scale it out. Job schedulers missing after a crash are put back first.
 */
export async function startSchedulerWorkers(config: SchedulerConfig, options: { log: Log; db?: SystemDb }): Promise<SchedulerWorkers> {
  const db = options.db ?? createSystemDb(config.DATABASE_SYSTEM_URL, { max: Math.max(4, config.SCHEDULER_CONCURRENCY * 2) });
  const ctx: DeliveryContext = { db, keyring: parseKeyring(config.ENCRYPTION_KEYS), timeoutMs: config.SCHEDULER_DELIVERY_TIMEOUT_MS };
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log: options.log });
  try {
    const report = await reconcileTimers(db, { prompts: queues.get(QUEUES.scheduledPrompts), heartbeats: queues.get(QUEUES.heartbeats) }, deliveryPolicy(config));
    options.log.info(report, 'job schedulers reconciled');
  } finally {
    await queues.close();
  }
  const common = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, concurrency: config.SCHEDULER_CONCURRENCY, log: options.log };
  const prompts = startWorker(QUEUES.scheduledPrompts, (job: Job<PromptJobData>) => deliverScheduledPrompt(ctx, job), common);
  const heartbeats = startWorker(QUEUES.heartbeats, (job: Job<HeartbeatJobData>) => deliverHeartbeat(ctx, job), common);
  return {
    prompts,
    heartbeats,
    async close() {
      await Promise.all([prompts.close(), heartbeats.close()]);
      if (!options.db) await db.destroy();
    },
  };
}
