import type { SystemDb } from '@agentyard/db/system';
import { QUEUES, startWorker, type Worker } from '@agentyard/queue';
import type { BridgeConfig } from './config.ts';
import { busDeliveryProcessor, type DeliveryJob } from './domain/bus-delivery.ts';

/** The bus-delivery worker, as worker.ts runs it (tests start it the same way). */
export function startBusDeliveryWorker(config: BridgeConfig, db: SystemDb, log: { error(obj: object, msg: string): void }): { worker: Worker<DeliveryJob>; close(): Promise<void> } {
  const processor = busDeliveryProcessor({ db, timeoutMs: config.BUS_DELIVERY_TIMEOUT_MS, allowedAddresses: config.BUS_DELIVERY_ALLOWED_ADDRESSES });
  const worker = startWorker<DeliveryJob, unknown>(QUEUES.busDelivery, processor.process, { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, concurrency: 4, log });
  return { worker, close: async () => { await worker.close(); await processor.close(); } };
}
