import { QueueEvents, type JobsOptions, type Queue } from 'bullmq';
import type { QueueName } from './names.ts';
import { redisConnection } from './redis.ts';

export interface JobWaiterOptions {
  redisUrl: string;
  prefix: string;
  queue: QueueName;
  log?: { error(obj: object, msg: string): void };
}

/**
 * Adds a job to another service's queue and waits for its outcome (a caller that needs the work
 * done before it goes on: the scheduler waking an agent before a delivery). The job's id is the
 * caller's deduplication: whoever adds the same id waits for the same job. One QueueEvents stream
 * (its own connection: it blocks) per process and queue.
 */
export function jobWaiter(options: JobWaiterOptions) {
  const connection = redisConnection(
    options.redisUrl,
    { maxRetriesPerRequest: null },
    { purpose: `${options.queue} events`, log: options.log },
  );
  const events = new QueueEvents(options.queue, { connection, prefix: options.prefix });
  events.on('error', (err) => options.log?.error({ err: { message: err.message } }, `${options.queue} events error`));
  const ready = events.waitUntilReady();

  return {
    /** The job's return value once done; throws its failure, or a timeout after `timeoutMs`. */
    async run<T>(
      queue: Queue,
      name: string,
      data: object,
      opts: JobsOptions & { jobId: string },
      timeoutMs: number,
    ): Promise<T> {
      await ready;
      const job = await queue.add(name, data, opts);
      return (await job.waitUntilFinished(events, timeoutMs)) as T;
    },
    async close(): Promise<void> {
      await events.close();
      connection.disconnect();
    },
  };
}

export type JobWaiter = ReturnType<typeof jobWaiter>;
