import type { Keyring } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { AGENT_CRASH_LOOP_MAIL_JOB, QUEUES, type AgentCrashLoopMailJob, type QueueSet } from '@agentyard/queue';
import type { ContainerEvent, ContainerExit, RuntimeDriver } from '@agentyard/runtime';
import { AGENT_FAILURES, type AgentRow } from '../../agents/agent-views.ts';
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

/**
 * Keeps agents up from the engine's own events: records what happened to each agent's container
 * (one row per container run, whichever worker sees it first), starts again what exited on its own
 * with backoff, and stops and tells the owner when it keeps exiting. Every decision is taken in the
 * agent's turn (`exclusive`), after the operation that may have caused the exit (a stop, a rebuild)
 * has finished, and from what the engine says now.
 */
export function agentWatchdog(options: AgentWatchdogOptions) {
  const { db, driver, keyring, exclusive, queues, log } = options;
  const policy = options.policy ?? WATCHDOG_POLICY;
  const lifecycle = () => queues.get(QUEUES.lifecycle);

  const ownerOf = (containerId: string) =>
    db.selectFrom('agents').selectAll().where('container_id', '=', containerId).executeTakeFirst();

  const logTail = async (agent: AgentRow, containerId: string): Promise<string[]> => {
    if (!driver.logs) return [];
    const redact = redactorFor(keyring, agent);
    const lines = await driver.logs(containerId, LOG_TAIL_LINES).catch(() => []);
    return lines.map((l) => redact(l.text).slice(0, LOG_LINE_CHARS));
  };

  const unexpectedExitsSince = async (agentId: string, ms: number) => {
    const row = await db
      .selectFrom('agent_events')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('agent_id', '=', agentId)
      .where('kind', 'in', ['exit', 'oom'])
      .where('expected', '=', false)
      .where('at', '>', new Date(Date.now() - ms))
      .executeTakeFirstOrThrow();
    return row.n;
  };

  const exitDetail = (exit: ContainerExit) =>
    `exit code ${exit.exitCode}${exit.oomKilled ? ' (out of memory)' : ''} at ${exit.finishedAt}`;

  /** Acts on an exit of the agent's current container, in its turn; says what it did. */
  async function exited(agent: AgentRow, containerId: string, exit: ContainerExit): Promise<string> {
    // A restore stops the container with the status unchanged; if its process died, finishing the restore brings it up.
    const restoring = agent.restoring_snapshot_id !== null;
    const unexpected = UP_STATUSES.includes(agent.status) && !restoring;
    const recorded = await db
      .insertInto('agent_events')
      .values({
        agent_id: agent.id,
        user_id: agent.user_id,
        kind: exit.oomKilled ? 'oom' : 'exit',
        expected: !unexpected,
        exit_code: exit.exitCode,
        oom_killed: exit.oomKilled,
        detail: unexpected ? null : restoring ? 'while restoring' : `while ${agent.status}`,
        log_tail: await logTail(agent, containerId),
        engine_key: `${containerId}@${exit.startedAt}`,
      })
      .onConflict((oc) => oc.column('engine_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!recorded) return 'already recorded';
    if (!unexpected) return 'expected exit';

    const recent = await unexpectedExitsSince(agent.id, policy.loopWindowMs);
    if (recent >= policy.loopExits) {
      await db
        .updateTable('agents')
        .set({
          status: 'error',
          last_error: AGENT_FAILURES.crashLoop,
          last_error_detail: exitDetail(exit),
          updated_at: sql<Date>`now()`,
        })
        .where('id', '=', agent.id)
        .execute();
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
    const delay = restartDelayMs(await unexpectedExitsSince(agent.id, policy.backoffWindowMs), policy);
    await db
      .updateTable('agents')
      .set({
        status: 'error',
        last_error: AGENT_FAILURES.exited,
        last_error_detail: exitDetail(exit),
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', agent.id)
      .execute();
    const restart: WatchdogRestartJob = { agentId: agent.id, containerId };
    await lifecycle().add(WATCHDOG_RESTART_JOB, restart, {
      delay,
      jobId: `restart-${containerId}-${Date.parse(exit.startedAt) || 0}`,
    });
    log.info(
      { agentId: agent.id, exitCode: exit.exitCode, oomKilled: exit.oomKilled, delayMs: delay },
      'agent exited unexpectedly: restarting',
    );
    return `restart in ${delay} ms`;
  }

  return {
    /** One engine event (or a catch-up finding) about a container: what it meant for its agent. */
    async handle(job: ContainerEventJob): Promise<string> {
      const owner = await ownerOf(job.containerId);
      // A warm container, one already replaced, or a deleted agent's: nothing of an agent's now.
      if (!owner) return 'no agent';
      return exclusive(owner.id, async () => {
        const agent = await db.selectFrom('agents').selectAll().where('id', '=', owner.id).executeTakeFirst();
        if (!agent || agent.container_id !== job.containerId) return 'replaced';
        if (job.kind === 'health') {
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
        const info = await driver.inspect(job.containerId);
        if (!info) return 'gone';
        // Started again meanwhile (a restart): this run did not end.
        if (info.state === 'running' || !info.lastExit) return 'running';
        return exited(agent, job.containerId, info.lastExit);
      });
    },

    /** Starts the agent's container again after an unexpected exit, unless something else happened to it meanwhile. */
    async restart({ agentId, containerId }: WatchdogRestartJob): Promise<string> {
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
    },

    /**
     * What the engine says of every agent that should be up: an exit this platform did not see
     * (no worker ran, the event stream was down) is queued like a live event. Returns how many.
     */
    async catchUp(): Promise<number> {
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
        await lifecycle().add(CONTAINER_EVENT_JOB, job, {
          jobId: `event-${info.id}-exit-${Date.parse(info.lastExit.finishedAt) || 0}`,
        });
      }
      return found;
    },

    /** Queues one live engine event; every worker sees it, its job id lets one act on it. */
    async queue(event: ContainerEvent): Promise<void> {
      const job: ContainerEventJob = {
        containerId: event.containerId,
        kind: event.kind,
        ...(event.health !== undefined ? { health: event.health } : {}),
      };
      await lifecycle().add(CONTAINER_EVENT_JOB, job, {
        jobId: `event-${event.containerId}-${event.kind}-${event.time}`,
      });
    },
  };
}

export type AgentWatchdog = ReturnType<typeof agentWatchdog>;
