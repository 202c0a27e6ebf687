import { createSystemDb } from '@agentyard/db/system';
import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import { QUEUES, startJobWorkers, type Worker } from '@agentyard/queue';
import type { BridgeConfig } from './config.ts';
import { busDeliveryProcessor, type DeliveryJob } from './domain/privileged/bus-delivery.ts';
import { bridgeJobs } from './workers/jobs.ts';

export interface BridgeWorkers extends Workers {
  delivery: Worker<DeliveryJob>;
}

/** The bridge's queue workers (bus delivery), as worker.ts runs them (tests start them the same way). */
export async function startWorkers(config: BridgeConfig, deps: WorkerDeps = {}): Promise<BridgeWorkers> {
  const log = workerLog('bridge-worker', config, deps);
  const db = deps.systemDb ?? createSystemDb(config.DATABASE_SYSTEM_URL, { max: 4 });
  const processor = busDeliveryProcessor({
    db,
    timeoutMs: config.BUS_DELIVERY_TIMEOUT_MS,
    allowedAddresses: config.BUS_DELIVERY_ALLOWED_ADDRESSES,
  });
  const jobs = startJobWorkers(bridgeJobs(processor), {
    redisUrl: config.REDIS_URL,
    prefix: config.QUEUE_PREFIX,
    concurrency: { [QUEUES.busDelivery]: config.BUS_DELIVERY_CONCURRENCY },
    log,
  });
  return {
    delivery: jobs.get(QUEUES.busDelivery),
    async close() {
      await jobs.close();
      await processor.close();
      if (!deps.systemDb) await db.destroy();
    },
  };
}
