import { sql } from '@agentyard/db';
import { UnrecoverableError, type Job, type Queue } from '@agentyard/queue';
import { nextFiring } from './cron.ts';
import { planFiring, type MissedRunPolicy } from './missed-runs.ts';
import {
  dueTimeOf,
  failureMessage,
  sendPrompt,
  type DeliveryContext,
  type PromptToDeliver,
} from './privileged/delivery.ts';
import { NOT_SENT_AGAIN } from './run-records.ts';
import { PAUSED_MESSAGE } from './spend-pause.ts';
import { releaseQueuedRuns, turnInProgress } from './privileged/turn-outcomes.ts';

/** Why a firing was not delivered while the previous run's turn went on. */
export const OVERLAP_SKIPPED = "the previous run's turn had not ended (overlap policy skip)";
export const OVERLAP_QUEUE_FULL =
  "the previous run's turn had not ended and a run already waits for it (overlap policy queue)";

import {
  batchJobs,
  retryJob,
  timerOf,
  type CronFiringJobData,
  type CronTimer,
  type DeliveryPolicy,
  type PromptBatchJobData,
} from './timers.ts';

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
const dueAt = (timer: CronTimer, due: Date) =>
  sql`enabled and cron_schedule = ${timer.cronSchedule} and timezone = ${timer.timezone} and (next_run is null or next_run <= ${due})`;

/** A cron expression's firing: one batch job per SCHEDULER_BATCH_SIZE tasks due at it. */
export async function fanOutFiring(ctx: FiringContext, job: Job<CronFiringJobData>): Promise<{ batches: number }> {
  const due = dueTimeOf(job);
  const timer = timerOf(job.data);
  const { rows } = await sql<{
    n: string;
  }>`select count(*) as n from scheduled_tasks where ${dueAt(timer, due)}`.execute(ctx.db);
  const batches = Math.ceil(Number(rows[0]!.n) / ctx.batchSize);
  if (batches > 0) await ctx.queue.addBulk(batchJobs(timer, due.getTime(), batches, ctx.policy));
  return { batches };
}

/**
 * How long a batch's claim on its tasks holds: long enough for every delivery of the batch to time
 * out in turn. A repeat of the same batch job takes its own claims back at once; other batches wait
 * for the claims of a batch job that is gone for good to expire.
 */
const claimTtlMs = (ctx: FiringContext) => (Math.ceil(ctx.batchSize / ctx.slots.limit) + 1) * ctx.timeoutMs;

/** Claims up to a batch of the tasks due at the firing, with their agents' hooks, in one statement. */
interface ClaimedTask extends PromptToDeliver {
  next_run: Date | null;
  missed_run_policy: MissedRunPolicy;
  overlap_policy: 'skip' | 'queue';
  agent_status: string;
  /** The previous run's turn has not ended (a partial index holds the unfinished runs: a lookup, not a scan). */
  busy: boolean;
  /** A run already waits for that turn (overlapPolicy `queue`). */
  queued: boolean;
  /** The agent's gateway token is on record, so its turn's end can be read; otherwise a delivered run is settled at once. */
  followable: boolean;
  /** The due time of a delivery an earlier attempt had under way when its worker stopped (its run `pending`, started). */
  in_flight_due: Date | null;
}

async function claimBatch(ctx: FiringContext, claimant: string, timer: CronTimer, due: Date): Promise<ClaimedTask[]> {
  const { rows } = await sql<ClaimedTask>`
    update scheduled_tasks t set claimed_by = ${claimant}, claim_expires_at = now() + ${claimTtlMs(ctx)} * interval '1 millisecond'
    from agents a
    where a.id = t.agent_id and t.id in (
      select id from scheduled_tasks
      where ${dueAt(timer, due)} and (claimed_by is null or claimed_by = ${claimant} or claim_expires_at < now())
      limit ${ctx.batchSize} for update skip locked)
    returning t.id, t.user_id, t.name, t.prompt, t.agent_id, a.gateway_url, a.hooks_token_sealed, t.next_run, t.missed_run_policy, t.overlap_policy, a.status as agent_status,
      ${turnInProgress(sql.ref('t.id'), ctx.follow.turnTimeoutMs)} as busy, a.gateway_token_sealed is not null as followable,
      exists (select 1 from scheduled_task_runs q where q.task_id = t.id and q.finished_at is null and q.status = 'pending' and q.started_at is null and not q.manual) as queued,
      (select r.due_at from scheduled_task_runs r where r.task_id = t.id and r.status = 'pending' and not r.manual and r.started_at is not null and r.due_at >= t.next_run
        order by r.due_at limit 1) as in_flight_due`.execute(ctx.db);
  return rows;
}

interface Outcome {
  id: string;
  /** The due time the run row is for: the firing's, or the latest of an outage caught up or missed. */
  due: Date;
  /** The task's nextRun after this firing. */
  next: Date;
  status: 'delivered' | 'ran-late' | 'failed' | 'missed' | 'skipped-no-credits' | 'skipped-overlap' | 'pending';
  startedAt: Date | null;
  at: Date;
  error: string | null;
  /** A delivered run is left unsettled for its follow-up (its agent's turn can be read). */
  followable: boolean;
}

/**
 * Records a batch's outcomes with one statement and lets go of its claims: each firing's run row
 * (a repeat of the batch or its retry updates it, never adds a second), and on the task: a delivered
 * one gets lastRun and the run's due time, a failed one its error, one more failed attempt and one
 * more failure in a row (never a run); all move nextRun on, unless the task was disabled or moved to
 * another timer meanwhile (its nextRun is then the request's). At `failureLimit` failures in a row
 * the task pauses itself and says why; those tasks are answered, for the owner's mail. Only tasks
 * this batch still holds are recorded, so the run rows and the tasks agree.
 */
type Recorded = { id: string; paused: boolean; due: Date; status: string; followable: boolean };
async function recordOutcomes(
  ctx: FiringContext,
  claimant: string,
  timer: CronTimer,
  outcomes: Outcome[],
): Promise<Recorded[]> {
  if (!outcomes.length) return [];
  const column = <K extends keyof Outcome>(key: K) => outcomes.map((o) => o[key]);
  const { rows } = await sql<Recorded>`
    with o as (
      select * from unnest(${column('id')}::uuid[], ${column('due')}::timestamptz[], ${column('next')}::timestamptz[], ${column('status')}::text[],
        ${column('startedAt')}::timestamptz[], ${column('at')}::timestamptz[], ${column('error')}::text[], ${column('followable')}::boolean[])
        as o(id, due, next, status, started_at, at, error, followable)),
    settled as (
      update scheduled_tasks t set
        last_run = case when o.status in ('delivered', 'ran-late') then o.at else t.last_run end,
        last_delivered_due = case when o.status in ('delivered', 'ran-late') then o.due else t.last_delivered_due end,
        last_error = o.error,
        last_error_at = case when o.error is null then t.last_error_at else o.at end,
        failed_attempts = case when o.error is null then 0 else t.failed_attempts + 1 end,
        last_status = o.status,
        consecutive_failures = case when o.status in ('delivered', 'ran-late') then 0 when o.status = 'failed' then t.consecutive_failures + 1 else t.consecutive_failures end,
        enabled = t.enabled and not (o.status = 'failed' and t.consecutive_failures + 1 >= ${ctx.failureLimit}),
        paused_reason = case when t.enabled and o.status = 'failed' and t.consecutive_failures + 1 >= ${ctx.failureLimit}
          then ${`Paused after ${ctx.failureLimit} failed runs in a row; the last: `} || o.error else t.paused_reason end,
        next_run = case
          when o.status = 'failed' and t.consecutive_failures + 1 >= ${ctx.failureLimit} then null
          when t.enabled and t.cron_schedule = ${timer.cronSchedule} and t.timezone = ${timer.timezone} then o.next
          else t.next_run end,
        claimed_by = null, claim_expires_at = null
      from o
      where t.id = o.id and t.claimed_by = ${claimant}
      returning t.id, t.user_id, o.due, o.status, o.started_at, o.at, o.error, o.followable, (t.enabled = false and o.status = 'failed' and t.paused_reason is not null) as paused),
    runs as (
      insert into scheduled_task_runs (task_id, user_id, due_at, status, started_at, finished_at, error)
      select id, user_id, due, status, started_at, case when status = 'pending' or (status in ('delivered', 'ran-late') and followable) then null else at end, error from settled
      on conflict (task_id, due_at) do update set status = excluded.status, started_at = coalesce(excluded.started_at, scheduled_task_runs.started_at),
        finished_at = excluded.finished_at, error = excluded.error)
    select id, paused, due, status, followable from settled`.execute(ctx.db);
  return rows;
}

/** The due times a batch's tasks missed before the one each settles: rows of their own, never twice. */
async function recordMissed(
  ctx: FiringContext,
  missed: { taskId: string; userId: string; due: Date; error: string }[],
): Promise<void> {
  if (!missed.length) return;
  const column = <K extends keyof (typeof missed)[number]>(key: K) => missed.map((m) => m[key]);
  await sql`
    insert into scheduled_task_runs (task_id, user_id, due_at, status, finished_at, error)
    select task_id, user_id, due, 'missed', now(), error
    from unnest(${column('taskId')}::uuid[], ${column('userId')}::uuid[], ${column('due')}::timestamptz[], ${column('error')}::text[]) as m(task_id, user_id, due, error)
    on conflict (task_id, due_at) do nothing`.execute(ctx.db);
}

/** In-flight runs of stopped attempts, other than the due time a task settles: failed, not sent again. */
async function recordNotSentAgain(ctx: FiringContext, runs: { taskId: string; due: Date }[]): Promise<void> {
  if (!runs.length) return;
  await sql`
    update scheduled_task_runs r set status = 'failed', finished_at = now(), error = ${NOT_SENT_AGAIN}
    from unnest(${runs.map((run) => run.taskId)}::uuid[], ${runs.map((run) => run.due)}::timestamptz[]) as s(task_id, due)
    where r.task_id = s.task_id and r.due_at = s.due and r.status = 'pending'`.execute(ctx.db);
}

/** Runs `write` again until it succeeds or `withinMs` has passed: a batch keeps what it knows through a PostgreSQL or Redis restart. */
async function persistently(withinMs: number, write: () => Promise<void>): Promise<void> {
  const until = Date.now() + withinMs;
  for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2000)) {
    try {
      return await write();
    } catch (error) {
      if (Date.now() + waitMs > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/** One task's part of a batch, ready to record. */
interface Settled {
  outcome: Outcome;
  missed: Parameters<typeof recordMissed>[1];
  notSentAgain: { taskId: string; due: Date }[];
  retry?: ReturnType<typeof retryJob>;
}

/**
 * Records a batch's tasks as they settle, a delivery slot's worth at a time, in order: retries
 * first (a crash between the two repeats the claim: nothing lost, never the reverse), then the
 * missed and not-sent-again runs, then the outcomes. What a stopped worker loses is then at most
 * the deliveries in flight (and those marked, ready for a slot) and the last few settled, which
 * its repeat finds marked in flight.
 */
function batchRecorder(ctx: FiringContext, claimant: string, timer: CronTimer) {
  let waiting: Settled[] = [];
  let chain = Promise.resolve();
  let failure: unknown;
  const write = async (items: Settled[]) => {
    if (failure !== undefined || !items.length) return;
    const retries = items.flatMap((item) => (item.retry ? [item.retry] : []));
    const withinMs = claimTtlMs(ctx);
    if (retries.length) await persistently(withinMs, async () => void (await ctx.queue.addBulk(retries)));
    await persistently(withinMs, () =>
      recordMissed(
        ctx,
        items.flatMap((item) => item.missed),
      ),
    );
    await persistently(withinMs, () =>
      recordNotSentAgain(
        ctx,
        items.flatMap((item) => item.notSentAgain),
      ),
    );
    let recorded: Recorded[] = [];
    await persistently(withinMs, async () => {
      recorded = await recordOutcomes(
        ctx,
        claimant,
        timer,
        items.map((item) => item.outcome),
      );
    });
    const paused = recorded.filter((row) => row.paused);
    if (paused.length) await ctx.notices.tasksPaused(paused.map((task) => task.id));
    await ctx.followTurns(
      recorded
        .filter((row) => (row.status === 'delivered' || row.status === 'ran-late') && row.followable)
        .map((row) => ({ taskId: row.id, due: row.due })),
    );
    // A turn that ended while its next run was being recorded as waiting: that run goes now.
    const waiting = recorded.filter((row) => row.status === 'pending').map((row) => row.id);
    if (waiting.length) await releaseQueuedRuns(ctx, waiting);
  };
  const flush = () => {
    const items = waiting;
    waiting = [];
    chain = chain.then(() => write(items)).catch((error: unknown) => void (failure ??= error));
    return chain;
  };
  return {
    add(item: Settled) {
      waiting.push(item);
      if (waiting.length >= ctx.slots.limit) void flush();
    },
    async done() {
      await flush();
      if (failure !== undefined) throw failure;
    },
  };
}

/**
 * One batch of a firing: claims its tasks, delivers each (at most the worker's delivery slots at
 * once, each run marked in flight before its prompt goes), hands each failure to a retry job of its
 * own with backoff, and records the outcomes as they come. A task whose earlier attempt was stopped
 * mid-delivery (a killed worker) is not sent that due time again: its run is failed, saying so.
 */
export async function deliverBatch(
  ctx: FiringContext,
  job: Job<PromptBatchJobData>,
): Promise<{ delivered: number; failed: number }> {
  const due = new Date(job.data.due);
  const claimant = job.id!;
  const timer = timerOf(job.data);
  const tasks = await claimBatch(ctx, claimant, timer, due);
  const paused = await ctx.pause.pausedAmong(tasks.map((task) => task.user_id));
  const now = new Date();
  const nextAfterDue = nextFiring(timer.cronSchedule, due, timer.timezone);
  const recorder = batchRecorder(ctx, claimant, timer);
  const outcomes = await Promise.all(
    tasks.map(async (task): Promise<Outcome> => {
      const plan = planFiring({
        timer,
        nextRun: task.next_run,
        policy: task.missed_run_policy,
        agentStatus: task.agent_status,
        due,
        now,
        graceMs: ctx.missedGraceMs,
        nextAfterDue,
      });
      const inFlight = task.in_flight_due;
      const isInFlight = (at: Date) => inFlight !== null && at.getTime() === inFlight.getTime();
      const missed = plan.missed
        .filter((run) => !isInFlight(run.due))
        .map((run) => ({ taskId: task.id, userId: task.user_id, ...run }));
      const settle = (outcome: Outcome, rest: Omit<Settled, 'outcome' | 'missed'> = { notSentAgain: [] }) => {
        recorder.add({ outcome, missed, ...rest });
        return outcome;
      };
      // The due time this task settles was under way when its worker stopped.
      if (inFlight && (plan.deliver ? isInFlight(plan.deliver.due) : !missed.length)) {
        return settle({
          id: task.id,
          due: inFlight,
          next: plan.next,
          status: 'failed',
          startedAt: null,
          at: now,
          error: NOT_SENT_AGAIN,
          followable: task.followable,
        });
      }
      const notSentAgain = inFlight ? [{ taskId: task.id, due: inFlight }] : [];
      // Nothing to deliver: the latest missed due time is the one the task settles.
      if (!plan.deliver) {
        const last = missed.pop()!;
        return settle(
          {
            id: task.id,
            due: last.due,
            next: plan.next,
            status: 'missed',
            startedAt: null,
            at: now,
            error: last.error,
            followable: task.followable,
          },
          { notSentAgain },
        );
      }
      const { due: runDue, status } = plan.deliver;
      const startedAt = new Date();
      const settled = { id: task.id, due: runDue, next: plan.next, startedAt, followable: task.followable };
      // The previous run's turn goes on: this one is skipped, or waits for it (one at most) by the task's overlapPolicy.
      if (task.busy) {
        if (task.overlap_policy === 'queue' && !task.queued)
          return settle(
            { ...settled, startedAt: null, status: 'pending', at: startedAt, error: null },
            { notSentAgain },
          );
        return settle(
          {
            ...settled,
            status: 'skipped-overlap',
            at: startedAt,
            error: task.queued ? OVERLAP_QUEUE_FULL : OVERLAP_SKIPPED,
          },
          { notSentAgain },
        );
      }
      // A user whose AI spend is exhausted: this firing is skipped (not retried), the next one looks again.
      if (paused.has(task.user_id))
        return settle(
          { ...settled, status: 'skipped-no-credits', at: startedAt, error: PAUSED_MESSAGE },
          { notSentAgain },
        );
      try {
        await sendPrompt(ctx, task, () => ctx.markInFlight({ taskId: task.id, userId: task.user_id, due: runDue }));
        return settle({ ...settled, status, at: new Date(), error: null }, { notSentAgain });
      } catch (error) {
        const retry =
          ctx.policy.attempts > 1 && !(error instanceof UnrecoverableError)
            ? retryJob(task.id, runDue.getTime(), ctx.policy)
            : undefined;
        return settle(
          { ...settled, status: 'failed', at: new Date(), error: failureMessage(error) },
          { notSentAgain, retry },
        );
      }
    }),
  );
  await recorder.done();
  const failed = outcomes.filter((o) => o.status !== 'delivered' && o.status !== 'ran-late').length;
  return { delivered: outcomes.length - failed, failed };
}
