import type { JobSchedulerTemplateOptions } from 'bullmq';
import type { QueueName } from './names.ts';
import type { QueueSet } from './queues.ts';

/** A job a process's queue runs every `everyMs` (a BullMQ job scheduler named for the job: one per platform, whatever the number of workers). */
export interface RepeatingJob {
  queue: QueueName;
  name: string;
  everyMs: number;
  opts?: JobSchedulerTemplateOptions;
}

/**
 * Schedules the repeating jobs now, and again each time Redis comes back: the schedulers live in
 * Redis, and one that restarted without its data (no append-only file, a new volume) has none, which
 * nothing else would make again before the process restarts. Upserting an existing one changes
 * nothing but its next run. Returns the unsubscribe (the queues' close does it too).
 */
export async function keepRepeatingJobs(
  queues: QueueSet,
  jobs: readonly RepeatingJob[],
  log: { error(obj: object, msg: string): void },
): Promise<() => void> {
  const schedule = () =>
    Promise.all(
      jobs.map((job) =>
        queues
          .get(job.queue)
          .upsertJobScheduler(
            job.name,
            { every: job.everyMs },
            { name: job.name, data: {}, ...(job.opts ? { opts: job.opts } : {}) },
          ),
      ),
    );
  await schedule();
  return queues.onReturn(() => {
    // Failing now means Redis went again: its next return schedules them again.
    schedule().catch((error: Error) =>
      log.error(
        { err: { message: error.message }, jobs: jobs.map((j) => j.name) },
        'repeating jobs not scheduled again after Redis came back',
      ),
    );
  });
}
