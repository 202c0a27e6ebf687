import { DelayedError, type Job } from 'bullmq';

/**
 * Puts the job being processed back in the queue to run again in `ms`, without spending one of its
 * attempts: for a job that must wait for something else to finish first. `token` is the one the
 * worker handed the processor.
 */
export async function lookAgainLater(job: Job, token: string | undefined, ms: number): Promise<never> {
  await job.moveToDelayed(Date.now() + ms, token);
  throw new DelayedError();
}
