import { createSystemDb } from '@agentyard/db/system';
import { parseKeyring } from '@agentyard/crypto';
import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import {
  agentActivity,
  createQueues,
  jobWaiter,
  QUEUES,
  redisConnection,
  startJobWorkers,
  type Worker,
} from '@agentyard/queue';
import { agentWaker } from './domain/privileged/agent-wake.ts';
import { activeStatusesOf } from '@agentyard/db';
import { deliveryPolicy, turnFollowPolicy, type SchedulerConfig } from './config.ts';
import { parseRetentionDays, purgeOldRuns } from './domain/privileged/run-retention.ts';
import { turnFollower } from './domain/privileged/turn-outcomes.ts';
import { deliverySlots } from './domain/delivery-slots.ts';
import { hooksTokens } from './domain/hooks-tokens.ts';
import type { FiringContext } from './domain/prompt-firings.ts';
import { reconcileTimers } from './domain/privileged/reconcile.ts';
import { inFlightMarks } from './domain/run-records.ts';
import { spendPause } from './domain/spend-pause.ts';
import { taskNotices } from './domain/task-notices.ts';
import { scheduleRunPurge, type HeartbeatJobData, type PromptJobData } from './domain/timers.ts';
import { schedulerJobs } from './workers/jobs.ts';

export interface SchedulerWorkers extends Workers {
  prompts: Worker<PromptJobData>;
  heartbeats: Worker<HeartbeatJobData>;
}

/**
 * The scheduler's workers: each process runs at most SCHEDULER_CONCURRENCY deliveries at once
 * (10 by default), whichever jobs they belong to; more worker processes scale it out. Job schedulers
 * missing after a crash are put back first.
 */
export async function startWorkers(config: SchedulerConfig, deps: WorkerDeps = {}): Promise<SchedulerWorkers> {
  const log = workerLog('scheduler-worker', config, deps);
  const db =
    deps.systemDb ?? createSystemDb(config.DATABASE_SYSTEM_URL, { max: Math.max(4, config.SCHEDULER_CONCURRENCY) });
  const policy = deliveryPolicy(config);
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log: log });
  const promptQueue = queues.get(QUEUES.scheduledPrompts);
  // The AI gateway's set of users whose spend is exhausted: read once per batch, never waited on for long.
  const spendRedis = redisConnection(
    config.REDIS_URL,
    { maxRetriesPerRequest: 1, commandTimeout: 1000 },
    { purpose: 'spend pause', log },
  );
  const follow = turnFollowPolicy(config);
  const wakes = jobWaiter({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, queue: QUEUES.lifecycle, log });
  const ctx: FiringContext = {
    db,
    tokens: hooksTokens(parseKeyring(config.ENCRYPTION_KEYS)),
    slots: deliverySlots(config.SCHEDULER_CONCURRENCY),
    timeoutMs: config.SCHEDULER_DELIVERY_TIMEOUT_MS,
    queue: promptQueue,
    policy,
    batchSize: config.SCHEDULER_BATCH_SIZE,
    pause: spendPause(spendRedis, config.QUEUE_PREFIX),
    failureLimit: config.SCHEDULE_FAILURE_LIMIT,
    missedGraceMs: config.SCHEDULER_MISSED_GRACE_SECONDS * 1000,
    notices: taskNotices(queues.get(QUEUES.email)),
    follow,
    followTurns: turnFollower(db, promptQueue, follow),
    heartbeatIdleDays: config.HEARTBEAT_IDLE_DAYS,
    markInFlight: inFlightMarks(db),
    reach: agentWaker(
      db,
      queues.get(QUEUES.lifecycle),
      wakes,
      config.SCHEDULER_WAKE_TIMEOUT_MS,
      agentActivity(spendRedis, { prefix: config.QUEUE_PREFIX, everyMs: 10_000, log }),
      config.SCHEDULER_DELIVERY_TIMEOUT_MS,
    ),
  };
  const reconcile = async () => {
    const report = await reconcileTimers(
      db,
      { prompts: promptQueue, heartbeats: queues.get(QUEUES.heartbeats) },
      policy,
    );
    await scheduleRunPurge(promptQueue, config.SCHEDULER_RUN_PURGE_EVERY_MS);
    return report;
  };
  try {
    log.info(await reconcile(), 'job schedulers reconciled');
  } catch (error) {
    await queues.close();
    await wakes.close();
    spendRedis.disconnect();
    throw error;
  }
  // A Redis that comes back without its data has no job schedulers, and nothing else would make
  // them again before this process restarts; one that kept them is left as it is (existing ones stay).
  let reconciling: Promise<void> | undefined;
  queues.onReturn(() => {
    reconciling ??= reconcile()
      .then((report) => log.info(report, 'job schedulers reconciled after Redis came back'))
      // Failing now means Redis went again: its next return reconciles again.
      .catch((error: Error) =>
        log.error({ err: { message: error.message } }, 'job schedulers not reconciled after Redis came back'),
      )
      .finally(() => (reconciling = undefined));
  });
  const retention = parseRetentionDays(config.SCHEDULER_RUN_RETENTION_DAYS);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const purge = () => purgeOldRuns(db, retention, activeStatuses);
  // Jobs, not deliveries: a batch job waits for the process's delivery slots, so a few batches in
  // hand keep the slots busy while the next one is claimed.
  const concurrency = config.SCHEDULER_CONCURRENCY;
  const jobs = startJobWorkers(schedulerJobs(ctx, purge), {
    redisUrl: config.REDIS_URL,
    prefix: config.QUEUE_PREFIX,
    concurrency: { [QUEUES.scheduledPrompts]: concurrency, [QUEUES.heartbeats]: concurrency },
    log,
  });
  let closed: Promise<void> | undefined;
  return {
    prompts: jobs.get(QUEUES.scheduledPrompts),
    heartbeats: jobs.get(QUEUES.heartbeats),
    close() {
      closed ??= (async () => {
        await jobs.close();
        await reconciling;
        await queues.close();
        await wakes.close();
        spendRedis.disconnect();
        if (!deps.systemDb) await db.destroy();
      })();
      return closed;
    },
  };
}
