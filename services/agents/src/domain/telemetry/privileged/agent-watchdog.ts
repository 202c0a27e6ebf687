import type { Keyring } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { AGENT_CRASH_LOOP_MAIL_JOB, QUEUES, type AgentCrashLoopMailJob, type QueueSet } from '@agentyard/queue';
import type { ContainerEvent, ContainerExit, RuntimeDriver } from '@agentyard/runtime';
import { AGENT_FAILURES, type AgentFailure, type AgentRow } from '../../agents/agent-views.ts';
import type { ExclusiveOperation } from '../../runtime/agent-operations.ts';
import { redactorFor } from '../agent-logs.ts';
import { followGatewayAddress } from '../../runtime/privileged/gateway-address.ts';

/** The lifecycle queue's job for one engine event about a container (its data: ContainerEventJob). */
export const CONTAINER_EVENT_JOB = 'container-event';
/** The lifecycle queue's delayed job that starts an agent again after an unexpected exit. */
export const WATCHDOG_RESTART_JOB = 'watchdog-restart';

export interface ContainerEventJob {
  containerId: string;
  kind: ContainerEvent['kind'];
  health?: string;
}
export interface WatchdogRestartJob {
  agentId: string;
  containerId: string;
}

/** Restarts wait 1 s, doubling to 5 min; 3 unexpected exits in 5 min are a crash loop. */
export const WATCHDOG_POLICY = {
  firstDelayMs: 1000,
  maxDelayMs: 5 * 60_000,
  loopExits: 3,
  loopWindowMs: 5 * 60_000,
  backoffWindowMs: 60 * 60_000,
} as const;
/** The statuses in which an agent's container should be running: an exit then is unexpected. */
const UP_STATUSES: readonly string[] = ['running', 'active'];
/** Lines of the container's output kept with an exit, each cut to this many characters. */
const LOG_TAIL_LINES = 50;
const LOG_LINE_CHARS = 1000;

/** The delay before the `n`th restart within the backoff window (n >= 1). */
export const restartDelayMs = (
  n: number,
  policy: Pick<typeof WATCHDOG_POLICY, 'firstDelayMs' | 'maxDelayMs'> = WATCHDOG_POLICY,
) => Math.min(policy.firstDelayMs * 2 ** Math.min(Math.max(n - 1, 0), 30), policy.maxDelayMs);

export interface AgentWatchdogOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  keyring: Keyring;
  exclusive: ExclusiveOperation;
  queues: QueueSet;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  policy?: typeof WATCHDOG_POLICY;
}

type WatchdogContext = AgentWatchdogOptions & { policy: typeof WATCHDOG_POLICY };

const lifecycleQueue = (queues: QueueSet) => queues.get(QUEUES.lifecycle);

const ownerOf = (db: SystemDb, containerId: string) =>
  db.selectFrom('agents').selectAll().where('container_id', '=', containerId).executeTakeFirst();

async function logTail({ driver, keyring }: WatchdogContext, agent: AgentRow, containerId: string): Promise<string[]> {
  if (!driver.logs) return [];
  const redact = redactorFor(keyring, agent);
  const lines = await driver.logs(containerId, LOG_TAIL_LINES).catch(() => []);
  return lines.map((l) => redact(l.text).slice(0, LOG_LINE_CHARS));
}

async function unexpectedExitsSince(db: SystemDb, agentId: string, ms: number): Promise<number> {
  const row = await db
    .selectFrom('agent_events')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('agent_id', '=', agentId)
    .where('kind', 'in', ['exit', 'oom'])
    .where('expected', '=', false)
    .where('at', '>', new Date(Date.now() - ms))
    .executeTakeFirstOrThrow();
  return row.n;
}

const exitDetail = (exit: ContainerExit) =>
  `exit code ${exit.exitCode}${exit.oomKilled ? ' (out of memory)' : ''} at ${exit.finishedAt}`;

/** The agent in error with the failure and the exit that caused it. */
const setFailure = (db: SystemDb, agentId: string, failure: AgentFailure, exit: ContainerExit) =>
  db
    .updateTable('agents')
    .set({ status: 'error', last_error: failure, last_error_detail: exitDetail(exit), updated_at: sql<Date>`now()` })
    .where('id', '=', agentId)
    .execute();

/** The exit as one event per container run (its engine key): false when another worker recorded it first. */
async function recordExit(
  context: WatchdogContext,
  agent: AgentRow,
  containerId: string,
  exit: ContainerExit,
  unexpected: boolean,
): Promise<boolean> {
  const restoring = agent.restoring_snapshot_id !== null;
  const recorded = await context.db
    .insertInto('agent_events')
    .values({
      agent_id: agent.id,
      user_id: agent.user_id,
      kind: exit.oomKilled ? 'oom' : 'exit',
      expected: !unexpected,
      exit_code: exit.exitCode,
      oom_killed: exit.oomKilled,
      detail: unexpected ? null : restoring ? 'while restoring' : `while ${agent.status}`,
      log_tail: await logTail(context, agent, containerId),
      engine_key: `${containerId}@${exit.startedAt}`,
    })
    .onConflict((oc) => oc.column('engine_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  return recorded !== undefined;
}

/** No more restarts for an agent that keeps exiting: in error, a crash-loop event, and a mail to its owner. */
async function stopCrashLoop(
  { db, queues, log, policy }: WatchdogContext,
  agent: AgentRow,
  exit: ContainerExit,
  recent: number,
): Promise<string> {
  await setFailure(db, agent.id, AGENT_FAILURES.crashLoop, exit);
  const loop = await db
    .insertInto('agent_events')
    .values({
      agent_id: agent.id,
      user_id: agent.user_id,
      kind: 'crash-loop',
      exit_code: exit.exitCode,
      oom_killed: exit.oomKilled,
      detail: `${recent} times within ${policy.loopWindowMs / 60_000} minutes`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const mail: AgentCrashLoopMailJob = { eventId: loop.id };
  await queues.get(QUEUES.email).add(AGENT_CRASH_LOOP_MAIL_JOB, mail, { jobId: `crash-loop-${loop.id}` });
  log.warn({ agentId: agent.id, exits: recent }, 'agent is crash-looping: no more restarts');
  return 'crash loop';
}

/** The agent in error until its restart, queued after the backoff its recent exits earn. */
async function scheduleRestart(
  { db, queues, log, policy }: WatchdogContext,
  agent: AgentRow,
  containerId: string,
  exit: ContainerExit,
): Promise<string> {
  const delay = restartDelayMs(await unexpectedExitsSince(db, agent.id, policy.backoffWindowMs), policy);
  await setFailure(db, agent.id, AGENT_FAILURES.exited, exit);
  const restart: WatchdogRestartJob = { agentId: agent.id, containerId };
  await lifecycleQueue(queues).add(WATCHDOG_RESTART_JOB, restart, {
    delay,
    jobId: `restart-${containerId}-${Date.parse(exit.startedAt) || 0}`,
  });
  log.info(
    { agentId: agent.id, exitCode: exit.exitCode, oomKilled: exit.oomKilled, delayMs: delay },
    'agent exited unexpectedly: restarting',
  );
  return `restart in ${delay} ms`;
}

/** Acts on an exit of the agent's current container, in its turn; says what it did. */
async function exited(
  context: WatchdogContext,
  agent: AgentRow,
  containerId: string,
  exit: ContainerExit,
): Promise<string> {
  // A restore stops the container with the status unchanged; if its process died, finishing the restore brings it up.
  const unexpected = UP_STATUSES.includes(agent.status) && agent.restoring_snapshot_id === null;
  if (!(await recordExit(context, agent, containerId, exit, unexpected))) return 'already recorded';
  if (!unexpected) return 'expected exit';
  const recent = await unexpectedExitsSince(context.db, agent.id, context.policy.loopWindowMs);
  if (recent >= context.policy.loopExits) return stopCrashLoop(context, agent, exit, recent);
  return scheduleRestart(context, agent, containerId, exit);
}

/** A health change of the agent's current container, recorded; a container healthy again may answer at a new address. */
async function healthChanged(
  { db, driver }: WatchdogContext,
  agent: AgentRow,
  job: ContainerEventJob,
): Promise<string> {
  await db
    .insertInto('agent_events')
    .values({
      agent_id: agent.id,
      user_id: agent.user_id,
      kind: 'health',
      detail: (job.health ?? '').slice(0, 100) || null,
    })
    .execute();
  // Healthy again, perhaps elsewhere (a pod moved to another node): the platform calls it where it answers now.
  if (
    job.health === 'healthy' &&
    (await driver.inspect(job.containerId))?.state === 'running' &&
    (await followGatewayAddress(db, driver, agent.id))
  )
    return 'healthy at a new address';
  return `health ${job.health}`;
}

/** One engine event (or a catch-up finding) about a container: what it meant for its agent. */
async function handle(context: WatchdogContext, job: ContainerEventJob): Promise<string> {
  const { db, driver } = context;
  const owner = await ownerOf(db, job.containerId);
  // A warm container, one already replaced, or a deleted agent's: nothing of an agent's now.
  if (!owner) return 'no agent';
  return context.exclusive(owner.id, async () => {
    const agent = await db.selectFrom('agents').selectAll().where('id', '=', owner.id).executeTakeFirst();
    if (!agent || agent.container_id !== job.containerId) return 'replaced';
    if (job.kind === 'health') return healthChanged(context, agent, job);
    const info = await driver.inspect(job.containerId);
    if (!info) return 'gone';
    // Started again meanwhile (a restart): this run did not end.
    if (info.state === 'running' || !info.lastExit) return 'running';
    return exited(context, agent, job.containerId, info.lastExit);
  });
}

/** Starts the agent's container again after an unexpected exit, unless something else happened to it meanwhile. */
async function restart(
  { db, driver, exclusive, log }: WatchdogContext,
  { agentId, containerId }: WatchdogRestartJob,
): Promise<string> {
  return exclusive(agentId, async () => {
    const agent = await db.selectFrom('agents').selectAll().where('id', '=', agentId).executeTakeFirst();
    // Its owner started, stopped, repaired or deleted it meanwhile: theirs is the last word.
    if (
      !agent ||
      agent.container_id !== containerId ||
      agent.status !== 'error' ||
      agent.last_error !== AGENT_FAILURES.exited
    )
      return 'no longer due';
    await driver.start(containerId);
    await followGatewayAddress(db, driver, agentId);
    await db
      .updateTable('agents')
      .set({ status: 'running', last_error: null, last_error_detail: null, updated_at: sql<Date>`now()` })
      .where('id', '=', agentId)
      .execute();
    await db
      .insertInto('agent_events')
      .values({ agent_id: agentId, user_id: agent.user_id, kind: 'restarted' })
      .execute();
    log.info({ agentId }, 'agent restarted by the watchdog');
    return 'restarted';
  });
}

/**
 * What the engine says of every agent that should be up: an exit this platform did not see
 * (no worker ran, the event stream was down) is queued like a live event. Returns how many.
 */
async function catchUp({ db, driver, queues }: WatchdogContext): Promise<number> {
  const up = await db
    .selectFrom('agents')
    .select(['id', 'container_id'])
    .where('status', 'in', UP_STATUSES as never)
    .where('container_id', 'is not', null)
    .execute();
  let found = 0;
  for (const agent of up) {
    const info = await driver.inspect(agent.container_id!).catch(() => undefined);
    if (!info || info.state === 'running' || !info.lastExit) continue;
    found++;
    const job: ContainerEventJob = { containerId: info.id, kind: 'die' };
    await lifecycleQueue(queues).add(CONTAINER_EVENT_JOB, job, {
      jobId: `event-${info.id}-exit-${Date.parse(info.lastExit.finishedAt) || 0}`,
    });
  }
  return found;
}

/** Queues one live engine event; every worker sees it, its job id lets one act on it. */
async function queueEvent(queues: QueueSet, event: ContainerEvent): Promise<void> {
  const job: ContainerEventJob = {
    containerId: event.containerId,
    kind: event.kind,
    ...(event.health !== undefined ? { health: event.health } : {}),
  };
  await lifecycleQueue(queues).add(CONTAINER_EVENT_JOB, job, {
    jobId: `event-${event.containerId}-${event.kind}-${event.time}`,
  });
}

/**
 * Keeps agents up from the engine's own events: records what happened to each agent's container
 * (one row per container run, whichever worker sees it first), starts again what exited on its own
 * with backoff, and stops and tells the owner when it keeps exiting. Every decision is taken in the
 * agent's turn (`exclusive`), after the operation that may have caused the exit (a stop, a rebuild)
 * has finished, and from what the engine says now.
 */
export function agentWatchdog(options: AgentWatchdogOptions) {
  const context: WatchdogContext = { ...options, policy: options.policy ?? WATCHDOG_POLICY };
  return {
    handle: (job: ContainerEventJob): Promise<string> => handle(context, job),
    restart: (job: WatchdogRestartJob): Promise<string> => restart(context, job),
    catchUp: (): Promise<number> => catchUp(context),
    queue: (event: ContainerEvent): Promise<void> => queueEvent(options.queues, event),
  };
}

export type AgentWatchdog = ReturnType<typeof agentWatchdog>;
