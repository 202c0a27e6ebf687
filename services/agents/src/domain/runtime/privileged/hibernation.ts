import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import {
  QUEUES,
  WAKE_AGENT_JOB,
  wakeJobId,
  type AgentActivity,
  type QueueSet,
  type WakeAgentJob,
} from '@agentyard/queue';
import { resourcesFor, type RuntimeDriver } from '@agentyard/runtime';
import type { Redis } from 'ioredis';
import { AgentErrors, isAgentBusy } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import type { ExclusiveOperation } from '../agent-operations.ts';
import {
  afterFor,
  hibernationStep,
  pausesOf,
  type HibernationPlans,
  type HibernationSettings,
} from '../hibernation-policy.ts';

/** The lifecycle queue's scheduled job that pauses, stops and wakes agents by their activity. */
export const HIBERNATE_SWEEP_JOB = 'hibernate-sweep';

export interface AgentHibernationOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  redis: Redis;
  /** Key prefix shared by every process of one platform (QUEUE_PREFIX). */
  prefix: string;
  /** The agent's turn, as every container operation takes it. */
  exclusive: ExclusiveOperation;
  /** The same turn for a wake, waiting as long as a boot may take (a second process's wake waits for the first). */
  exclusiveWake: ExclusiveOperation;
  activity: AgentActivity;
  readiness: { waitUntilReady(gatewayUrl: string): Promise<boolean> };
  /** Brings a stopped agent up as a start does, in the caller's turn (the lifecycle's `bringUp`): admitted, on its owner's current plan (throws the refusal). */
  bringUp: (agentId: string) => Promise<unknown>;
  /** Restarts an awake agent (the runtime's restart, in the agent's turn): how a leaking idle gateway is recycled. */
  restart: (agentId: string) => Promise<void>;
  /** Per plan, how long an awake agent may be idle before it is recycled while over `recycleMemoryShare` of its memory. */
  recycleAfter: HibernationPlans;
  recycleMemoryShare: number;
  pauseAfter: HibernationPlans;
  stopAfter: HibernationPlans;
  /** The boot time assumed for an agent never started from a stop here. */
  bootEstimateMs: number;
  sweepEveryMs: number;
  log: { info?(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

const UP: readonly string[] = ['running', 'active'];
/** Stops (each waits for a gateway to exit) a sweep runs at once. */
const SWEEP_CONCURRENCY = 4;

/**
 * Hibernation of idle agents (issue 30): paused by the engine (memory kept, no CPU) after the plan's
 * idle time, stopped later (state disk kept), and woken by whatever needs them, transparently: the
 * caller waits for the resume or the boot. One wake per agent at a time: in this process the
 * callers share one promise, across processes the agent's turn makes the later ones find it awake.
 */
export function agentHibernation(options: AgentHibernationOptions) {
  const { db, driver, exclusive, activity, log } = options;
  const bootKey = `${options.prefix}:agent-boot-ms`;
  const waking = new Map<string, Promise<AgentRow>>();
  const bootMs = new Map<string, number>();

  const load = (id: string) => db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();

  /** Boot time (measured, else the estimate) plus the sweep's period and a margin: how far ahead of a due prompt a stopped agent is started. */
  const wakeLeadMs = (agentId: string) =>
    Math.ceil((bootMs.get(agentId) ?? options.bootEstimateMs) * 1.5) + options.sweepEveryMs + 5000;
  const settings: HibernationSettings = {
    pauseAfter: pausesOf(options.pauseAfter, Boolean(driver.pause)),
    stopAfter: options.stopAfter,
    wakeLeadMs,
    recycleAfter: options.recycleAfter,
    recycleMemoryShare: options.recycleMemoryShare,
  };

  /**
   * When each agent was last active: its recorded activity; else, never recorded, when its row last
   * changed (a new agent), but not before the record began: a Redis that came back without its data
   * lost every agent's activity, and an agent busy until then is not idle since its row's last change.
   */
  const lastActive = async (agents: readonly AgentRow[]): Promise<Map<string, number>> => {
    const [seen, since] = await Promise.all([activity.lastSeen(agents.map((a) => a.id)), activity.recordedSince()]);
    return new Map(agents.map((a) => [a.id, seen.get(a.id) ?? Math.max(new Date(a.updated_at).getTime(), since)]));
  };
  const idleSince = async (agent: AgentRow): Promise<number> => (await lastActive([agent])).get(agent.id)!;

  const suspend = (agentId: string, fromStatus: AgentRow['status'], hibernation: 'paused' | 'stopped') =>
    db
      .updateTable('agents')
      .set({
        status: 'suspended',
        hibernation,
        suspended_at: sql<Date>`coalesce(suspended_at, now())`,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', agentId)
      .where('status', '=', fromStatus)
      .executeTakeFirst();

  async function pause(agentId: string): Promise<string> {
    return exclusive(agentId, async () => {
      const agent = await load(agentId);
      if (!agent?.container_id || !UP.includes(agent.status)) return 'not running';
      // Looked at again in its turn: a request may have come meanwhile.
      const after = afterFor(options.pauseAfter, agent.plan);
      if (after === null || Date.now() - (await idleSince(agent)) < after) return 'active again';
      // Never in the middle of a turn, nor under an open socket.
      if ((await activity.held([agentId])).size) return 'held';
      const info = await driver.inspect(agent.container_id);
      if (info?.state !== 'running' || !driver.pause) return 'not running';
      // The row first: whoever reads it from now on wakes the agent, and waits for this turn to end.
      if ((await suspend(agentId, agent.status, 'paused')).numUpdatedRows === 0n) return 'changed';
      try {
        await driver.pause(agent.container_id);
      } catch (error) {
        await db
          .updateTable('agents')
          .set({ status: agent.status, hibernation: null, suspended_at: null })
          .where('id', '=', agentId)
          .execute();
        throw error;
      }
      log.info?.({ agentId }, 'idle agent paused');
      return 'paused';
    });
  }

  async function stop(agentId: string): Promise<string> {
    return exclusive(agentId, async () => {
      const agent = await load(agentId);
      if (!agent?.container_id) return 'no container';
      if (!(agent.status === 'suspended' && agent.hibernation === 'paused') && !UP.includes(agent.status))
        return 'not hibernating';
      const after = afterFor(options.stopAfter, agent.plan);
      if (after === null || Date.now() - (await idleSince(agent)) < after) return 'active again';
      if ((await activity.held([agentId])).size) return 'held';
      // Suspended before the container exits: the watchdog reads this exit as expected.
      if ((await suspend(agentId, agent.status, 'stopped')).numUpdatedRows === 0n) return 'changed';
      await driver.stop(agent.container_id);
      log.info?.({ agentId }, 'idle agent stopped');
      return 'stopped';
    });
  }

  async function resume(agentId: string): Promise<AgentRow> {
    return options.exclusiveWake(agentId, async () => {
      const agent = await load(agentId);
      if (!agent) throw AgentErrors.notFound();
      // Woken by another caller meanwhile, or its owner stopped or repaired it: nothing to do here.
      if (agent.status !== 'suspended') return agent;
      if (!agent.container_id || !agent.gateway_url) throw AgentErrors.wakeFailed();
      const began = performance.now();
      // What the engine says, not what the row says: a configuration rebuilt meanwhile left a stopped container.
      const info = await driver.inspect(agent.container_id);
      if (!info) throw AgentErrors.wakeFailed();
      let from = 'running';
      if (info.state === 'paused' && driver.unpause) {
        from = 'paused';
        // Still holding its memory, like a running agent: a new plan's size waits for its next start, not a resume.
        await driver.unpause(agent.container_id);
      } else if (info.state !== 'running') {
        from = 'stopped';
        await options.bringUp(agentId);
        // Read again: a plan of another size made a new container, recorded on the row.
        const up = await load(agentId);
        if (!up?.gateway_url || !(await options.readiness.waitUntilReady(up.gateway_url)))
          throw AgentErrors.wakeFailed();
        const took = Math.round(performance.now() - began);
        bootMs.set(agentId, took);
        await options.redis.hset(bootKey, agentId, took).catch(() => undefined);
      }
      const woken = await db
        .updateTable('agents')
        .set({ status: 'running', hibernation: null, suspended_at: null, updated_at: sql<Date>`now()` })
        .where('id', '=', agentId)
        .returningAll()
        .executeTakeFirstOrThrow();
      await activity.touch(agentId);
      log.info?.({ agentId, from, ms: Math.round(performance.now() - began) }, 'hibernating agent woken');
      return woken;
    });
  }

  /** Wakes the agent (resume from a pause, start from a stop) and answers it awake; callers in this process share one wake. */
  function wake(agentId: string): Promise<AgentRow> {
    const under = waking.get(agentId);
    if (under) return under;
    const woken = resume(agentId).finally(() => waking.delete(agentId));
    waking.set(agentId, woken);
    return woken;
  }

  /** The next scheduled prompt or heartbeat of each agent (ms from now), where it has one. */
  async function nextDue(agentIds: string[]): Promise<Map<string, number>> {
    if (!agentIds.length) return new Map();
    const { rows } = await sql<{ agent_id: string; due: Date }>`
      select agent_id, min(due) as due from (
        select agent_id, next_run as due from scheduled_tasks where enabled and next_run is not null and agent_id = any(${agentIds}::uuid[])
        union all
        select agent_id, next_heartbeat as due from heartbeats where enabled and next_heartbeat is not null and agent_id = any(${agentIds}::uuid[])
      ) d group by agent_id`.execute(db);
    return new Map(rows.map((r) => [r.agent_id, new Date(r.due).getTime() - Date.now()]));
  }

  return {
    pause,
    stop,
    wake,
    wakeLeadMs,

    /**
     * The agent a request is about to reach, awake: its activity recorded, a suspended one woken
     * first (the caller waits). Every path to an agent's gateway goes through here.
     */
    async reach(agent: AgentRow): Promise<AgentRow> {
      await activity.touch(agent.id);
      return agent.status === 'suspended' ? wake(agent.id) : agent;
    },

    /** Records activity of the agent that does not need it awake (its files). */
    touch: (agentId: string) => activity.touch(agentId),

    /** Keeps the agent from hibernating until the returned release (a turn, an open socket): see AgentActivity.hold. */
    hold: (agentId: string) => activity.hold(agentId),

    /**
     * One pass over the agents that run or hibernate: what each needs now (hibernationStep), done in
     * its turn; a wake is queued (the job the scheduler waits on), never waited for here. One pass
     * at a time across workers: a pass that finds another under way does nothing.
     */
    async sweep(queues: QueueSet): Promise<string> {
      const lock = `${options.prefix}:hibernate-sweep`;
      const token = String(Math.random());
      if ((await options.redis.set(lock, token, 'PX', Math.max(60_000, options.sweepEveryMs * 10), 'NX')) !== 'OK')
        return 'a sweep is under way';
      try {
        return await sweepOnce(queues);
      } finally {
        if ((await options.redis.get(lock)) === token) await options.redis.del(lock);
      }
    },
  };

  async function sweepOnce(queues: QueueSet): Promise<string> {
    {
      const agents = await db
        .selectFrom('agents')
        .selectAll()
        .where('status', 'in', ['running', 'active', 'suspended'])
        .where('container_id', 'is not', null)
        .execute();
      if (!agents.length) return 'no agents';
      const ids = agents.map((a) => a.id);
      const [active, due, boots, held, bindings, memory] = await Promise.all([
        lastActive(agents),
        nextDue(ids),
        options.redis.hmget(bootKey, ...ids),
        activity.held(ids),
        db
          .selectFrom('agent_channels')
          .select(['agent_id', 'channel'])
          .where('agent_id', 'in', ids)
          .where('enabled', '=', true)
          .execute(),
        lastMemory(ids),
      ]);
      const bound = Map.groupBy(bindings, (b) => b.agent_id);
      ids.forEach((id, i) => {
        if (boots[i]) bootMs.set(id, Number(boots[i]));
      });
      const now = Date.now();
      const steps = agents
        .map((agent) => ({
          agent,
          step: hibernationStep(
            { ...agent, boundChannels: (bound.get(agent.id) ?? []).map((b) => b.channel) },
            now - active.get(agent.id)!,
            due.get(agent.id) ?? null,
            settings,
            {
              share: memory.has(agent.id) ? memory.get(agent.id)! / resourcesFor(agent.plan).memoryBytes : null,
              upForMs: now - new Date(agent.updated_at).getTime(),
            },
          ),
        }))
        .filter((s) => s.step === 'wake' || (s.step !== null && !held.has(s.agent.id)));
      const done: Record<string, number> = {};
      for (let i = 0; i < steps.length; i += SWEEP_CONCURRENCY) {
        await Promise.all(
          steps.slice(i, i + SWEEP_CONCURRENCY).map(async ({ agent, step }) => {
            try {
              // A never-recorded agent's idle time, kept (forward only: nothing for one recorded), so a pause does not restart it.
              await activity.touch(agent.id, active.get(agent.id)!);
              const outcome =
                step === 'pause'
                  ? await pause(agent.id)
                  : step === 'stop'
                    ? await stop(agent.id)
                    : step === 'recycle'
                      ? await recycle(agent, memory.get(agent.id)!)
                      : await queueWake(queues, agent);
              done[outcome] = (done[outcome] ?? 0) + 1;
            } catch (error) {
              // An operation on it is under way: the next sweep looks again.
              if (!isAgentBusy(error))
                log.warn(
                  { agentId: agent.id, step, err: { message: (error as Error).message } },
                  'hibernation step failed',
                );
            }
          }),
        );
      }
      return (
        Object.entries(done)
          .map(([outcome, n]) => `${outcome} ${n}`)
          .join(', ') || 'nothing due'
      );
    }
  }

  /** Each awake agent's memory as the metrics sampler last read it (within the last ten minutes). */
  async function lastMemory(agentIds: string[]): Promise<Map<string, number>> {
    const { rows } = await sql<{ agent_id: string; memory_bytes: string }>`
      select distinct on (agent_id) agent_id, memory_bytes from agent_metric_samples
       where agent_id = any(${agentIds}::uuid[]) and memory_bytes is not null and sampled_at > now() - interval '10 minutes'
       order by agent_id, sampled_at desc`.execute(db);
    return new Map(rows.map((r) => [r.agent_id, Number(r.memory_bytes)]));
  }

  /** Restarts an idle agent whose gateway holds too much memory, and tells its owner in its events. */
  async function recycle(agent: AgentRow, memoryBytes: number): Promise<string> {
    await options.restart(agent.id);
    const mib = (bytes: number) => `${Math.round(bytes / 1024 ** 2)} MiB`;
    await db
      .insertInto('agent_events')
      .values({
        agent_id: agent.id,
        user_id: agent.user_id,
        kind: 'recycled',
        expected: true,
        detail: `idle with ${mib(memoryBytes)} of its ${mib(resourcesFor(agent.plan).memoryBytes)}: restarted to give memory back`,
      })
      .execute();
    log.info?.({ agentId: agent.id, memoryBytes }, 'idle agent recycled');
    return 'recycled';
  }

  /** A wake ahead of a due prompt, as a lifecycle job: one per hibernation, shared with the scheduler's. */
  async function queueWake(queues: QueueSet, agent: AgentRow): Promise<string> {
    const data: WakeAgentJob = { agentId: agent.id };
    const since = agent.suspended_at ? new Date(agent.suspended_at).getTime() : 0;
    await queues.get(QUEUES.lifecycle).add(WAKE_AGENT_JOB, data, {
      jobId: wakeJobId(agent.id, since),
      attempts: 1,
      removeOnComplete: { age: 60 },
      removeOnFail: true,
    });
    return 'wake queued';
  }
}

export type AgentHibernation = ReturnType<typeof agentHibernation>;
