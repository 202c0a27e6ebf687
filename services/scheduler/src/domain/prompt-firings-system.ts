import { sql } from '@agentyard/db';
import { UnrecoverableError, type Job, type Queue } from '@agentyard/queue';
import { nextFiring } from './cron.ts';
import { dueTimeOf, failureMessage, sendPrompt, type DeliveryContext, type PromptToDeliver } from './delivery-system.ts';
import { PAUSED_MESSAGE } from './spend-pause.ts';
import { batchJobs, retryJob, type CronFiringJobData, type DeliveryPolicy, type PromptBatchJobData } from './timers.ts';

export interface FiringContext extends DeliveryContext {
  /** The scheduled-prompts queue, for the batch and retry jobs a firing adds. */
  queue: Queue;
  policy: DeliveryPolicy;
  batchSize: number;
}

// A task is due at a firing when it is enabled on the firing's expression and its nextRun is at or
// before the due time: settling the task's firing (delivered, or handed to its retry job) moves
// nextRun past it, so a firing is taken once per task whatever repeats (a restarted worker, a
// retried batch job). nextRun is null only for a disabled task.
const dueAt = (cronSchedule: string, due: Date) => sql`enabled and cron_schedule = ${cronSchedule} and (next_run is null or next_run <= ${due})`;

/** A cron expression's firing: one batch job per SCHEDULER_BATCH_SIZE tasks due at it. */
export async function fanOutFiring(ctx: FiringContext, job: Job<CronFiringJobData>): Promise<{ batches: number }> {
  const due = dueTimeOf(job);
  const { rows } = await sql<{ n: string }>`select count(*) as n from scheduled_tasks where ${dueAt(job.data.cronSchedule, due)}`.execute(ctx.db);
  const batches = Math.ceil(Number(rows[0]!.n) / ctx.batchSize);
  if (batches > 0) await ctx.queue.addBulk(batchJobs(job.data.cronSchedule, due.getTime(), batches, ctx.policy));
  return { batches };
}

/**
 * How long a batch's claim on its tasks holds: long enough for every delivery of the batch to time
 * out in turn. A repeat of the same batch job takes its own claims back at once; other batches wait
 * for the claims of a batch job that is gone for good to expire.
 */
const claimTtlMs = (ctx: FiringContext) => (Math.ceil(ctx.batchSize / ctx.slots.limit) + 1) * ctx.timeoutMs;

/** Claims up to a batch of the tasks due at the firing, with their agents' hooks, in one statement. */
async function claimBatch(ctx: FiringContext, claimant: string, cronSchedule: string, due: Date): Promise<PromptToDeliver[]> {
  const { rows } = await sql<PromptToDeliver>`
    update scheduled_tasks t set claimed_by = ${claimant}, claim_expires_at = now() + ${claimTtlMs(ctx)} * interval '1 millisecond'
    from agents a
    where a.id = t.agent_id and t.id in (
      select id from scheduled_tasks
      where ${dueAt(cronSchedule, due)} and (claimed_by is null or claimed_by = ${claimant} or claim_expires_at < now())
      limit ${ctx.batchSize} for update skip locked)
    returning t.id, t.user_id, t.name, t.prompt, t.agent_id, a.gateway_url, a.hooks_token_sealed`.execute(ctx.db);
  return rows;
}

interface Outcome {
  id: string;
  at: Date;
  error: string | null;
}

/**
 * Records a batch's outcomes with one statement and lets go of its claims: a delivered task gets
 * lastRun and the firing's due time, a failed one its error and one more failed attempt (never a
 * run); both move nextRun to the next firing, unless the task was disabled or moved to another
 * expression meanwhile (its nextRun is then the request's).
 */
async function recordOutcomes(ctx: FiringContext, claimant: string, cronSchedule: string, due: Date, outcomes: Outcome[]): Promise<void> {
  if (!outcomes.length) return;
  const next = nextFiring(cronSchedule, due);
  await sql`
    update scheduled_tasks t set
      last_run = case when o.error is null then o.at else t.last_run end,
      last_delivered_due = case when o.error is null then ${due} else t.last_delivered_due end,
      last_error = o.error,
      last_error_at = case when o.error is null then t.last_error_at else o.at end,
      failed_attempts = case when o.error is null then 0 else t.failed_attempts + 1 end,
      next_run = case when t.enabled and t.cron_schedule = ${cronSchedule} then ${next} else t.next_run end,
      claimed_by = null, claim_expires_at = null
    from unnest(${outcomes.map((o) => o.id)}::uuid[], ${outcomes.map((o) => o.at)}::timestamptz[], ${outcomes.map((o) => o.error)}::text[]) as o(id, at, error)
    where t.id = o.id and t.claimed_by = ${claimant}`.execute(ctx.db);
}

/**
 * One batch of a firing: claims its tasks, delivers each (at most the worker's delivery slots at
 * once), hands each failure to a retry job of its own with backoff, then records every outcome.
 */
export async function deliverBatch(ctx: FiringContext, job: Job<PromptBatchJobData>): Promise<{ delivered: number; failed: number }> {
  const due = new Date(job.data.due);
  const claimant = job.id!;
  const tasks = await claimBatch(ctx, claimant, job.data.cronSchedule, due);
  const retries: ReturnType<typeof retryJob>[] = [];
  const paused = await ctx.pause.pausedAmong(tasks.map((task) => task.user_id));
  const outcomes = await Promise.all(
    tasks.map(async (task): Promise<Outcome> => {
      // A user whose AI spend is exhausted: this firing is skipped (not retried), the next one looks again.
      if (paused.has(task.user_id)) return { id: task.id, at: new Date(), error: PAUSED_MESSAGE };
      try {
        await sendPrompt(ctx, task);
        return { id: task.id, at: new Date(), error: null };
      } catch (error) {
        if (ctx.policy.attempts > 1 && !(error instanceof UnrecoverableError)) retries.push(retryJob(task.id, due.getTime(), ctx.policy));
        return { id: task.id, at: new Date(), error: failureMessage(error) };
      }
    }),
  );
  // Retries first: a crash between the two repeats the batch's claim (nothing lost), never the reverse.
  if (retries.length) await ctx.queue.addBulk(retries);
  await recordOutcomes(ctx, claimant, job.data.cronSchedule, due, outcomes);
  const failed = outcomes.filter((o) => o.error !== null).length;
  return { delivered: outcomes.length - failed, failed };
}
