import { Queue, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { QueueName } from './names.ts';

export interface QueueFactoryOptions {
  redisUrl: string;
  prefix: string;
  log?: { error(obj: object, msg: string): void };
}

/** Retried with backoff, kept briefly for inspection, then removed. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

export interface QueueSet {
  get(name: QueueName): Queue;
  close(): Promise<void>;
}

/**
 * Producer-side queues for HTTP handlers: one shared connection with the offline queue off, so a
 * request fails fast when Redis is down instead of hanging (STYLE.md, BullMQ in production).
 */
export function createQueues(options: QueueFactoryOptions): QueueSet {
  const connection = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  connection.on('error', (err) => options.log?.error({ err: { message: err.message } }, 'queue connection error'));
  const queues = new Map<QueueName, Queue>();
  return {
    get(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new Queue(name, { connection, prefix: options.prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
        queue.on('error', (err) => options.log?.error({ err: { message: err.message }, queue: name }, 'queue error'));
        queues.set(name, queue);
      }
      return queue;
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      connection.disconnect();
    },
  };
}
