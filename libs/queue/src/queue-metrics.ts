import { Queue, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { metrics, pingRedis, registerDependency, scrapedGauge } from '@agentyard/observability';
import type { QueueName } from './names.ts';

const STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized', 'waiting-children'] as const;

/** The queues this process works, counted when Prometheus scrapes (each queue by the process that works it). */
const counted = new Map<QueueName, Queue>();

function countJobs(): void {
  scrapedGauge('bullmq_jobs', 'BullMQ jobs by queue and state', ['queue', 'state'], async () => {
    const rows: Array<[{ queue: string; state: string }, number]> = [];
    await Promise.all(
      [...counted].map(async ([queue, handle]) => {
        const counts = await handle.getJobCounts(...STATES);
        for (const state of STATES) rows.push([{ queue, state }, counts[state] ?? 0]);
      }),
    );
    return rows;
  });
}

/**
 * A worker's metrics and readiness: its queue's counts by state, its jobs' durations by outcome,
 * and its Redis connection among this process's dependencies; all withdrawn when it closes.
 */
export function observeWorker(name: QueueName, worker: Worker, connection: Redis, prefix: string): void {
  countJobs();
  const handle = new Queue(name, { connection, prefix });
  handle.on('error', () => {
    /* the worker's own listener reports the shared connection's errors */
  });
  counted.set(name, handle);
  const withdrawCheck = registerDependency('redis', (signal) => pingRedis(connection, signal));
  const durations = metrics.jobDuration();
  const observe = (outcome: string) => (job: { processedOn?: number; finishedOn?: number } | undefined) => {
    if (job?.processedOn && job.finishedOn)
      durations.observe({ queue: name, outcome }, (job.finishedOn - job.processedOn) / 1000);
  };
  worker.on('completed', observe('completed'));
  worker.on('failed', observe('failed'));
  worker.on('closing', () => {
    withdrawCheck();
    if (counted.get(name) === handle) counted.delete(name);
  });
}
