import { UnrecoverableError, type Job, type JobSchedulerTemplateOptions, type Worker } from 'bullmq';
import type { QueueName } from './names.ts';
import type { RepeatingJob } from './repeating-jobs.ts';
import { startWorker, type WorkerOptions } from './workers.ts';

/** One kind of job a service's workers run: its queue, its handler (the parameter's type is the data's), and its period when it repeats. */
export interface JobDefinition<Data> {
  queue: QueueName;
  run(job: Job<Data>, token: string | undefined): Promise<unknown>;
  /** Scheduled every `everyMs` by `keepRepeatingJobs(queues, repeatingJobs(catalogue), log)`. */
  repeat?: { everyMs: number; opts?: JobSchedulerTemplateOptions };
}

/** A service's jobs by name: every job its workers run, each with its data's type. */
export type JobCatalogue<Jobs = Record<string, unknown>> = { [Name in keyof Jobs]: JobDefinition<Jobs[Name]> };

/** Declares a catalogue: each job's data type is read from its handler, so dispatch needs no cast. */
export function defineJobs<Jobs>(catalogue: JobCatalogue<Jobs>): JobCatalogue<Jobs> {
  return catalogue;
}

export interface JobWorkersOptions extends Omit<WorkerOptions, 'concurrency' | 'bull'> {
  /** Jobs run at once by a queue's worker (1 for a queue not named). */
  concurrency?: Partial<Record<QueueName, number>>;
  /** BullMQ options of a queue's worker (how many finished jobs it keeps…). */
  bull?: Partial<Record<QueueName, WorkerOptions['bull']>>;
}

export interface JobWorkers {
  /** The worker of a queue of the catalogue. */
  get(queue: QueueName): Worker;
  /** Closes every worker, each waiting for its running jobs. */
  close(): Promise<void>;
}

/**
 * One worker (`startWorker`) per queue of the catalogue, running each job by its name's handler. A
 * name the catalogue does not hold on that queue fails for good: retrying cannot teach it.
 */
export function startJobWorkers(catalogue: JobCatalogue, options: JobWorkersOptions): JobWorkers {
  const { concurrency, bull, ...common } = options;
  const queues = new Set(Object.values<JobDefinition<unknown>>(catalogue).map((job) => job.queue));
  const workers = new Map(
    [...queues].map((queue) => {
      const worker = startWorker(
        queue,
        (job, token) => {
          const definition = Object.hasOwn(catalogue, job.name) ? catalogue[job.name] : undefined;
          if (definition?.queue !== queue) throw new UnrecoverableError(`unknown ${queue} job ${job.name}`);
          return definition.run(job, token);
        },
        { ...common, concurrency: concurrency?.[queue], bull: bull?.[queue] },
      );
      return [queue, worker] as const;
    }),
  );
  return {
    get(queue) {
      const worker = workers.get(queue);
      if (!worker) throw new Error(`no job of the catalogue runs on ${queue}`);
      return worker;
    },
    async close() {
      await Promise.all([...workers.values()].map((worker) => worker.close()));
    },
  };
}

/** The catalogue's repeating jobs, for `keepRepeatingJobs`. */
export function repeatingJobs(catalogue: JobCatalogue): RepeatingJob[] {
  return Object.entries<JobDefinition<unknown>>(catalogue).flatMap(([name, job]) =>
    job.repeat
      ? [{ queue: job.queue, name, everyMs: job.repeat.everyMs, ...(job.repeat.opts ? { opts: job.repeat.opts } : {}) }]
      : [],
  );
}
