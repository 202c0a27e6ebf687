import { once } from 'node:events';
import { Queue, type BulkJobOptions, type JobsOptions } from 'bullmq';
import { redisConnection } from './redis.ts';
import { pingRedis, registerDependency, requestIdNow } from '@agentyard/observability';
import { queueTelemetry } from './telemetry.ts';
import type { QueueName } from './names.ts';

/** A job's data with the id of the request being served, where there is one: the worker's logs name it. */
function stamped(data: unknown): unknown {
  const requestId = requestIdNow();
  return requestId && data !== null && typeof data === 'object' && !Array.isArray(data)
    ? { ...data, queuedBy: requestId }
    : data;
}

/** A queue whose jobs, added while a request is served, carry that request's id as `queuedBy`. */
class RequestStampedQueue extends Queue {
  override add(name: string, data: unknown, opts?: JobsOptions) {
    return super.add(name, stamped(data), opts);
  }

  override addBulk(jobs: { name: string; data: unknown; opts?: BulkJobOptions }[]) {
    return super.addBulk(jobs.map((job) => ({ ...job, data: stamped(job.data) })));
  }
}

export interface QueueFactoryOptions {
  redisUrl: string;
  prefix: string;
  log?: { error(obj: object, msg: string): void };
  /** How long a Redis command may go unanswered before it fails (default 5 s). */
  commandTimeoutMs?: number;
}

/** Retried with backoff, kept briefly for inspection, then removed. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

/**
 * Redis could not take a job: a 503 whose message the client may read (`expose`, as http-errors
 * says it), so a request that needed the job answers "try again" instead of an internal error.
 */
export class QueueUnavailableError extends Error {
  readonly statusCode = 503;
  readonly expose = true;
  constructor() {
    super('Job queue unavailable, try again shortly');
    this.name = 'QueueUnavailableError';
  }
}

/** How long a job waits for a connection that is not ready before its request is answered 503. */
const READY_WAIT_MS = 1000;

export interface QueueSet {
  get(name: QueueName): Queue;
  /**
   * Resolves when Redis answers (one PING), else throws QueueUnavailableError: a request that will
   * need a job asks before it changes anything.
   */
  available(): Promise<void>;
  /** Queues one job; a failure while the connection is down, or unanswered, is a QueueUnavailableError. */
  add<T extends object>(name: QueueName, jobName: string, data: T, options?: JobsOptions): Promise<void>;
  /** Calls `listener` each time the connection is ready again after it was lost (Redis restarted, or the network came back); returns the unsubscribe. */
  onReturn(listener: () => void): () => void;
  close(): Promise<void>;
}

/**
 * Producer-side queues for HTTP handlers: one shared connection with the offline queue off, so a
 * request fails fast when Redis is down instead of hanging (a queued command would wait for Redis), and a
 * command timeout, so it fails too when Redis stops answering. No blocking command runs on it.
 */
export function createQueues(options: QueueFactoryOptions): QueueSet {
  const connection = redisConnection(
    options.redisUrl,
    {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: false,
      commandTimeout: options.commandTimeoutMs ?? 5000,
    },
    { purpose: 'queue', log: options.log },
  );
  const queues = new Map<QueueName, Queue>();
  const withdrawCheck = registerDependency('redis', (signal) => pingRedis(connection, signal));
  const returnListeners = new Set<() => void>();
  let readyBefore = false;
  connection.on('ready', () => {
    if (readyBefore) for (const listener of returnListeners) listener();
    readyBefore = true;
  });
  /** A connection still being made (a process just started) is given a moment. */
  const connected = async () => {
    if (connection.status === 'ready') return;
    await once(connection, 'ready', { signal: AbortSignal.timeout(READY_WAIT_MS) }).catch(() => {
      throw new QueueUnavailableError();
    });
  };
  return {
    get(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new RequestStampedQueue(name, {
          connection,
          prefix: options.prefix,
          defaultJobOptions: DEFAULT_JOB_OPTIONS,
          ...queueTelemetry(),
        });
        queue.on('error', (err) => options.log?.error({ err: { message: err.message }, queue: name }, 'queue error'));
        queues.set(name, queue);
      }
      return queue;
    },
    async available() {
      await connected();
      // The connection's state is this process's last news of it; Redis answering is the fact.
      await connection.ping().catch(() => {
        throw new QueueUnavailableError();
      });
    },
    async add(name, jobName, data, jobOptions) {
      await connected(); // a queue first used while the connection is down would wait for it without end
      try {
        await this.get(name).add(jobName, data, jobOptions);
      } catch (error) {
        if (connection.status !== 'ready' || (error as Error).message === 'Command timed out')
          throw new QueueUnavailableError();
        throw error;
      }
    },
    onReturn(listener) {
      returnListeners.add(listener);
      return () => returnListeners.delete(listener);
    },
    async close() {
      returnListeners.clear();
      withdrawCheck();
      await Promise.all([...queues.values()].map((q) => q.close()));
      connection.disconnect();
    },
  };
}
