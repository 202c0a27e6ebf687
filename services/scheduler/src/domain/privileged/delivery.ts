import { metrics } from '@agentyard/observability';
import {
  sql,
  type Database,
  type HeartbeatRunStatus,
  type HeartbeatsTable,
  type Transaction,
  type Updateable,
} from '@agentyard/db';
import { conversationsIdleSince, idleMessage, SPEND_LIMIT_MESSAGE, spendLimitReached } from './heartbeat-guards.ts';
import type { SystemDb } from '@agentyard/db/system';
import { runAgentTurn, wakeAgent } from '@agentyard/agent-gateway';
import { UnrecoverableError, type Job } from '@agentyard/queue';
import type { DeliverySlots } from '../delivery-slots.ts';
import { frequencyMs } from '../frequency.ts';
import type { HooksTokens } from '../hooks-tokens.ts';
import { type InFlightRun, NOT_MARKED, NOT_SENT_AGAIN, recordRun, recordTaskStatus } from '../run-records.ts';
import type { TaskNotices } from '../task-notices.ts';
import { PAUSED_MESSAGE, type SpendPause } from '../spend-pause.ts';
import type { HeartbeatJobData, PromptRetryJobData, TurnFollowPolicy } from '../timers.ts';

export interface DeliveryContext {
  db: SystemDb;
  tokens: HooksTokens;
  slots: DeliverySlots;
  timeoutMs: number;
  pause: SpendPause;
  /** Failed runs in a row after which a task pauses itself (SCHEDULE_FAILURE_LIMIT). */
  failureLimit: number;
  /** A firing handled later than this after its due time was missed (SCHEDULER_MISSED_GRACE_SECONDS). */
  missedGraceMs: number;
  notices: TaskNotices;
  /** Marks a firing's run in flight before its prompt goes (grouped with the other deliveries under way: run-records.ts). */
  markInFlight: (run: InFlightRun) => Promise<void>;
  /** Records the agent's activity and wakes it when it hibernates (`status` as read with the task): resolves once it is awake. */
  reach: (agentId: string, status: string) => Promise<void>;
  /** How a delivered run's turn is followed, and the follow-up jobs of delivered runs. */
  follow: TurnFollowPolicy;
  followTurns: (runs: readonly { taskId: string; due: Date }[]) => Promise<void>;
  /** A heartbeat pauses itself when nobody has talked with its agent for this many days (HEARTBEAT_IDLE_DAYS). */
  heartbeatIdleDays: number;
}

export type DeliveryOutcome = 'delivered' | 'skipped-disabled' | 'skipped-already-delivered' | 'skipped-paused';

/** The firing a scheduler's job stands for: BullMQ sets `prevMillis` to its due time. */
export const dueTimeOf = (job: Job) => new Date(job.opts.prevMillis ?? job.timestamp);

/** How late a firing's first attempt started against its due time (`cron`, `heartbeat`). */
export function recordFiringLag(job: Job, kind: string): void {
  if (job.attemptsMade === 0 && job.processedOn)
    metrics.schedulerFiringLag().observe({ kind }, Math.max(0, job.processedOn - dueTimeOf(job).getTime()) / 1000);
}

export interface PromptToDeliver {
  id: string;
  user_id: string;
  name: string;
  prompt: string;
  agent_id: string;
  gateway_url: string | null;
  hooks_token_sealed: string | null;
  /** As read with the task: a suspended agent is woken before the prompt goes. */
  agent_status: string;
}

/**
 * One scheduled prompt to its agent (`POST /hooks/agent`), in one of the worker's delivery slots.
 * `beforeSend` (the run marked in flight) runs while it waits for its slot, after its agent is
 * reached: if it fails, nothing is sent.
 */
export function sendPrompt(
  ctx: DeliveryContext,
  task: PromptToDeliver,
  beforeSend?: () => Promise<void>,
): Promise<unknown> {
  return ctx.slots.readyThenRun(
    async () => {
      await ctx.reach(task.agent_id, task.agent_status);
      await beforeSend?.().catch((error: unknown) => {
        throw new Error(NOT_MARKED, { cause: error });
      });
    },
    // The task's session, persistent: its turns thread there, and each one's end and answer are read
    // back from it (turn-outcomes.ts); the agent gives a turn as long as the scheduler waits for it.
    () =>
      runAgentTurn(
        ctx.tokens.target({
          id: task.agent_id,
          gateway_url: task.gateway_url,
          hooks_token_sealed: task.hooks_token_sealed,
        }),
        {
          message: task.prompt,
          name: task.name,
          sessionKey: `scheduled:${task.id}`,
          sessionMode: 'persistent',
          timeoutSeconds: Math.ceil(ctx.follow.turnTimeoutMs / 1000),
        },
        ctx.timeoutMs,
      ),
  );
}

/** A failed delivery as recorded on the task: the message, never more than 500 characters. */
export const failureMessage = (error: unknown) => String((error as Error)?.message ?? error).slice(0, 500);

/** A task with what delivering its prompt needs of it and of its agent; undefined once it is deleted. */
export function taskToDeliver(db: SystemDb, taskId: string) {
  return db
    .selectFrom('scheduled_tasks')
    .innerJoin('agents', 'agents.id', 'scheduled_tasks.agent_id')
    .select([
      'scheduled_tasks.id',
      'scheduled_tasks.user_id',
      'scheduled_tasks.name',
      'scheduled_tasks.prompt',
      'scheduled_tasks.enabled',
      'scheduled_tasks.run_at',
      'scheduled_tasks.last_delivered_due',
      'scheduled_tasks.missed_run_policy',
      'scheduled_tasks.claimed_by',
      'scheduled_tasks.claim_expires_at',
      'agents.id as agent_id',
      'agents.gateway_url',
      'agents.hooks_token_sealed',
      'agents.gateway_token_sealed',
      'agents.status as agent_status',
    ])
    .where('scheduled_tasks.id', '=', taskId)
    .executeTakeFirst();
}

/**
 * Retries one task's firing that failed in its batch. A disabled or deleted task, or a firing
 * already delivered, is not delivered again. A failure is recorded on the task and thrown, so
 * BullMQ retries it with backoff. `nextRun` is the batches' to move, not the retry's.
 */
export async function retryScheduledPrompt(
  ctx: DeliveryContext,
  job: Job<PromptRetryJobData>,
): Promise<DeliveryOutcome> {
  const due = new Date(job.data.due);
  const task = await taskToDeliver(ctx.db, job.data.taskId);
  if (!task?.enabled) return 'skipped-disabled';
  if (task.last_delivered_due && task.last_delivered_due.getTime() >= due.getTime()) return 'skipped-already-delivered';
  const run = { taskId: task.id, userId: task.user_id, due, startedAt: new Date() };
  const row = await ctx.db
    .selectFrom('scheduled_task_runs')
    .select(['status', 'started_at'])
    .where('task_id', '=', task.id)
    .where('due_at', '=', due)
    .executeTakeFirst();
  if (!row || row.status === 'pending') {
    // The firing's batch holds the task until it has recorded the run: it is the batch's still.
    if (task.claimed_by && task.claim_expires_at && task.claim_expires_at.getTime() > Date.now())
      throw new Error('the firing is not recorded yet');
    // An earlier attempt of this retry stopped while delivering it (its worker killed): the agent may have it.
    if (row?.started_at) {
      await ctx.db.transaction().execute(async (trx) => {
        await recordRun(trx, { ...run, startedAt: row.started_at, status: 'failed', error: NOT_SENT_AGAIN });
        await recordTaskStatus(trx, task.id, 'failed', { countsFailure: false, failureLimit: ctx.failureLimit });
      });
      return 'skipped-already-delivered';
    }
  }
  // The firing's run row changes with the task, in one transaction: they never disagree.
  if ((await ctx.pause.pausedAmong([task.user_id])).size) {
    await ctx.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('scheduled_tasks')
        .set({ last_error: PAUSED_MESSAGE, last_error_at: sql`now()` })
        .where('id', '=', task.id)
        .execute();
      await recordRun(trx, { ...run, status: 'skipped-no-credits', error: PAUSED_MESSAGE });
      await recordTaskStatus(trx, task.id, 'skipped-no-credits', {
        countsFailure: false,
        failureLimit: ctx.failureLimit,
      });
    });
    return 'skipped-paused';
  }
  // Marked in flight before the prompt goes, so a repeat of this attempt after a crash does not send it twice.
  const markInFlight = async () => {
    await ctx.db
      .updateTable('scheduled_task_runs')
      .set({ status: 'pending', started_at: run.startedAt, finished_at: null })
      .where('task_id', '=', task.id)
      .where('due_at', '=', due)
      .execute();
  };
  try {
    await sendPrompt(ctx, task, markInFlight);
  } catch (error) {
    await ctx.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('scheduled_tasks')
        .set({
          last_error: failureMessage(error),
          last_error_at: sql`now()`,
          failed_attempts: sql`failed_attempts + 1`,
        })
        .where('id', '=', task.id)
        .execute();
      await recordRun(trx, { ...run, status: 'failed', error: failureMessage(error) });
    });
    throw error;
  }
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('scheduled_tasks')
      .set({ last_run: sql`now()`, last_delivered_due: due, last_error: null, failed_attempts: 0 })
      .where('id', '=', task.id)
      .where((eb) => eb.or([eb('last_delivered_due', 'is', null), eb('last_delivered_due', '<', due)]))
      .execute();
    await recordRun(trx, { ...run, status: 'delivered', error: null, followed: task.gateway_token_sealed !== null });
    await recordTaskStatus(trx, task.id, 'delivered', { countsFailure: false, failureLimit: ctx.failureLimit });
  });
  if (task.gateway_token_sealed) await ctx.followTurns([{ taskId: task.id, due }]);
  return 'delivered';
}

/** A heartbeat firing's run row, written or brought up to date (a retry of the same firing updates it). */
async function recordHeartbeatRun(
  trx: Transaction<Database>,
  run: {
    userId: string;
    agentRef: string;
    due: Date;
    status: HeartbeatRunStatus;
    startedAt: Date;
    error: string | null;
  },
) {
  const finishedAt = new Date();
  await trx
    .insertInto('heartbeat_runs')
    .values({
      user_id: run.userId,
      agent_ref: run.agentRef,
      due_at: run.due,
      status: run.status,
      started_at: run.startedAt,
      finished_at: finishedAt,
      error: run.error,
    })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'agent_ref', 'due_at'])
        .doUpdateSet({ status: run.status, finished_at: finishedAt, error: run.error }),
    )
    .execute();
}

/**
 * Wakes the agent for one heartbeat (`POST /hooks/wake`) and moves `lastHeartbeat`/`nextHeartbeat`
 * on; every firing is a run row. It does not go while the owner's credits are spent or their spend
 * limit is reached (skipped, the next one looks again), and it pauses itself, saying why, when
 * nobody has talked with the agent for HEARTBEAT_IDLE_DAYS (the known runaway: an abandoned agent
 * woken, and billed, forever).
 */
export async function deliverHeartbeat(
  ctx: DeliveryContext,
  job: Job<HeartbeatJobData>,
): Promise<DeliveryOutcome | 'paused-idle'> {
  const due = dueTimeOf(job);
  const beat = await ctx.db
    .selectFrom('heartbeats')
    .leftJoin('agents', 'agents.id', 'heartbeats.agent_id')
    .select([
      'heartbeats.user_id',
      'heartbeats.agent_ref',
      'heartbeats.enabled',
      'heartbeats.frequency',
      'heartbeats.last_heartbeat',
      'agents.id as agent_id',
      'agents.gateway_url',
      'agents.hooks_token_sealed',
      'agents.gateway_token_sealed',
      'agents.created_at as agent_created_at',
      'agents.status as agent_status',
    ])
    .where('heartbeats.user_id', '=', job.data.userId)
    .where('heartbeats.agent_ref', '=', job.data.agentRef)
    .executeTakeFirst();
  if (!beat?.enabled) return 'skipped-disabled';
  if (beat.last_heartbeat && beat.last_heartbeat.getTime() >= due.getTime()) return 'skipped-already-delivered';
  const startedAt = new Date();
  // The heartbeat and its firing's run row change together.
  const settle = (status: HeartbeatRunStatus, error: string | null, heartbeat: Updateable<HeartbeatsTable> = {}) =>
    ctx.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('heartbeats')
        .set({ last_status: status, last_error: error, ...heartbeat })
        .where('user_id', '=', beat.user_id)
        .where('agent_ref', '=', beat.agent_ref)
        .execute();
      await recordHeartbeatRun(trx, { userId: beat.user_id, agentRef: beat.agent_ref, due, status, startedAt, error });
    });
  if ((await ctx.pause.pausedAmong([beat.user_id])).size) {
    await settle('skipped-no-credits', PAUSED_MESSAGE);
    return 'skipped-paused';
  }
  if (await spendLimitReached(ctx.db, beat.user_id)) {
    await settle('skipped-spend-limit', SPEND_LIMIT_MESSAGE);
    return 'skipped-paused';
  }
  let idleSince: Date | null = null;
  try {
    // A heartbeat keyed by the runtime instance id has no agent row, so no hooks token to wake it with.
    if (!beat.agent_id) throw new UnrecoverableError('runtime instance has no hooks endpoint on record');
    const agent = {
      id: beat.agent_id,
      gateway_url: beat.gateway_url,
      hooks_token_sealed: beat.hooks_token_sealed,
      gateway_token_sealed: beat.gateway_token_sealed,
    };
    const target = ctx.tokens.target(agent);
    idleSince = await ctx.slots.run(async () => {
      await ctx.reach(agent.id, beat.agent_status ?? '');
      const idle = agent.gateway_token_sealed
        ? await conversationsIdleSince(
            ctx.tokens.gateway(agent),
            beat.agent_created_at ?? startedAt,
            ctx.heartbeatIdleDays,
            ctx.timeoutMs,
          )
        : null;
      if (!idle) await wakeAgent(target, 'Heartbeat', ctx.timeoutMs);
      return idle;
    });
  } catch (error) {
    await settle('failed', failureMessage(error));
    throw error;
  }
  if (idleSince) {
    await settle('skipped-idle', idleMessage(ctx.heartbeatIdleDays, idleSince), {
      enabled: false,
      next_heartbeat: null,
    });
    return 'paused-idle';
  }
  await settle('delivered', null, {
    last_heartbeat: new Date(),
    next_heartbeat: new Date(due.getTime() + frequencyMs(beat.frequency)),
  });
  return 'delivered';
}
