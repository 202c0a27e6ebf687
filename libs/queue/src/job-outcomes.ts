import { Job, type Queue, type QueueEvents } from 'bullmq';

interface Waiter {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * Waits for the outcome of many jobs of one queue through one pair of QueueEvents listeners.
 * (`Job.waitUntilFinished` adds a `closing` listener to the Queue for every job waited on, so
 * waiting for 20 jobs at once tripped Node's MaxListenersExceededWarning.) A job retried after a
 * failed attempt is still waited for: only its last attempt's failure rejects.
 */
export function jobOutcomes(queue: Queue, events: QueueEvents) {
  const waiting = new Map<string, Waiter[]>();
  const settle = (jobId: string, outcome: (waiter: Waiter) => void) => {
    const waiters = waiting.get(jobId);
    waiting.delete(jobId);
    for (const waiter of waiters ?? []) {
      clearTimeout(waiter.timer);
      outcome(waiter);
    }
  };
  events.on('completed', ({ jobId, returnvalue }) => settle(jobId, (w) => w.resolve(returnvalue)));
  events.on('failed', ({ jobId, failedReason }) => settle(jobId, (w) => w.reject(new Error(failedReason))));

  return {
    /** The job's return value once it completed; rejects when it failed for good or `timeoutMs` passed. */
    async finished(jobId: string, timeoutMs: number): Promise<unknown> {
      const outcome = new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const rest = (waiting.get(jobId) ?? []).filter((w) => w.timer !== timer);
          if (rest.length) waiting.set(jobId, rest);
          else waiting.delete(jobId);
          reject(new Error(`job ${jobId} did not finish within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(jobId, [...(waiting.get(jobId) ?? []), { resolve, reject, timer }]);
      });
      // Listening first, then looking: a job that finished before we listened is settled here.
      // The state first, then the job: finishing writes the outcome and the state in one step, so a
      // job read before its state could be finished by then with its outcome still unread (null).
      await events.waitUntilReady();
      const state = await queue.getJobState(jobId);
      if (state === 'unknown') settle(jobId, (w) => w.reject(new Error(`no job ${jobId}`)));
      else if (state === 'completed' || state === 'failed') {
        const job = await Job.fromId(queue, jobId);
        if (!job) settle(jobId, (w) => w.reject(new Error(`no job ${jobId}`)));
        else if (state === 'completed') settle(jobId, (w) => w.resolve(job.returnvalue));
        else settle(jobId, (w) => w.reject(new Error(job.failedReason)));
      }
      return outcome;
    },
  };
}
