import { Worker, type Processor, type WorkerOptions as BullWorkerOptions } from 'bullmq';
import { ClosableRedis } from './redis.ts';
import { runForJob } from '@agentyard/observability';
import type { QueueName } from './names.ts';
import { observeWorker } from './queue-metrics.ts';
import { queueTelemetry } from './telemetry.ts';

export interface WorkerOptions {
  redisUrl: string;
  prefix: string;
  concurrency?: number;
  log: { error(obj: object, msg: string): void; info?(obj: object, msg: string): void };
  bull?: Partial<BullWorkerOptions>;
}

/**
 * A worker with the production conventions: its own blocking connection with
 * `maxRetriesPerRequest: null`, an error listener, failures logged without job data (which never
 * holds secrets anyway), and `close()` waiting for running jobs on shutdown.
 */
export function startWorker<T, R>(name: QueueName, processor: Processor<T, R>, options: WorkerOptions): Worker<T, R> {
  const connection = new ClosableRedis(options.redisUrl, { maxRetriesPerRequest: null });
  // A job queued while serving a request is processed as for that request: its log lines name it.
  const forItsRequest: Processor<T, R> = (job, token, signal) =>
    runForJob(queuedBy(job.data), () => processor(job, token, signal));
  const worker = new Worker<T, R>(name, forItsRequest, {
    connection,
    prefix: options.prefix,
    concurrency: options.concurrency ?? 1,
    ...queueTelemetry(),
    ...options.bull,
  });
  worker.on('error', (err) => options.log.error({ err: { message: err.message }, queue: name }, 'worker error'));
  worker.on('failed', (job, err) =>
    options.log.error(
      {
        queue: name,
        jobId: job?.id,
        reqId: queuedBy(job?.data),
        attempt: job?.attemptsMade,
        err: { message: err.message },
      },
      'job failed',
    ),
  );
  observeWorker(name, worker, connection, options.prefix);
  worker.on('closed', () => connection.disconnect());
  return worker;
}

/** The id of the request that queued a job (libs/queue's queues stamp it), if any. */
function queuedBy(data: unknown): string | undefined {
  const value = (data as { queuedBy?: unknown } | null | undefined)?.queuedBy;
  return typeof value === 'string' ? value : undefined;
}
