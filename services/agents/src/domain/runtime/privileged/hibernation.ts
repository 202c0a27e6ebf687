import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { QueueSet } from '@agentyard/queue';
import { resourcesFor } from '@agentyard/runtime';
import { isAgentBusy } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import { hibernationStep, pausesOf, type HibernationSettings } from '../hibernation-policy.ts';
import { queueWake, resume, wakeLeadMs } from './agent-wake.ts';
import { type AgentHibernationOptions, type HibernationContext, lastActive } from './hibernation-context.ts';
import { pause, recycle, stop } from './idle-agents.ts';

/** The lifecycle queue's scheduled job that pauses, stops and wakes agents by their activity. */
export const HIBERNATE_SWEEP_JOB = 'hibernate-sweep';

/** Stops (each waits for a gateway to exit) a sweep runs at once. */
const SWEEP_CONCURRENCY = 4;

/** The next scheduled prompt or heartbeat of each agent (ms from now), where it has one. */
async function nextDue(db: SystemDb, agentIds: string[]): Promise<Map<string, number>> {
  if (!agentIds.length) return new Map();
  const { rows } = await sql<{ agent_id: string; due: Date }>`
    select agent_id, min(due) as due from (
      select agent_id, next_run as due from scheduled_tasks where enabled and next_run is not null and agent_id = any(${agentIds}::uuid[])
      union all
      select agent_id, next_heartbeat as due from heartbeats where enabled and next_heartbeat is not null and agent_id = any(${agentIds}::uuid[])
    ) d group by agent_id`.execute(db);
  return new Map(rows.map((r) => [r.agent_id, new Date(r.due).getTime() - Date.now()]));
}

/** Each awake agent's memory as the metrics sampler last read it (within the last ten minutes). */
async function lastMemory(db: SystemDb, agentIds: string[]): Promise<Map<string, number>> {
  const { rows } = await sql<{ agent_id: string; memory_bytes: string }>`
    select distinct on (agent_id) agent_id, memory_bytes from agent_metric_samples
     where agent_id = any(${agentIds}::uuid[]) and memory_bytes is not null and sampled_at > now() - interval '10 minutes'
     order by agent_id, sampled_at desc`.execute(db);
  return new Map(rows.map((r) => [r.agent_id, Number(r.memory_bytes)]));
}

/** The hibernation policy's settings, from the options and the boot times measured so far. */
const hibernationSettings = (context: HibernationContext): HibernationSettings => ({
  pauseAfter: pausesOf(context.pauseAfter, Boolean(context.driver.pause)),
  stopAfter: context.stopAfter,
  wakeLeadMs: (agentId) => wakeLeadMs(context, agentId),
  recycleAfter: context.recycleAfter,
  recycleMemoryShare: context.recycleMemoryShare,
});

type Step = NonNullable<ReturnType<typeof hibernationStep>>;

/** What each agent that runs or hibernates needs now, from its activity, its next due prompt, its channels and memory. */
async function stepsDue(context: HibernationContext, settings: HibernationSettings, agents: AgentRow[]) {
  const { db, activity } = context;
  const ids = agents.map((a) => a.id);
  const [active, due, boots, held, bindings, memory] = await Promise.all([
    lastActive(activity, agents),
    nextDue(db, ids),
    context.redis.hmget(context.bootKey, ...ids),
    activity.held(ids),
    db
      .selectFrom('agent_channels')
      .select(['agent_id', 'channel'])
      .where('agent_id', 'in', ids)
      .where('enabled', '=', true)
      .execute(),
    lastMemory(db, ids),
  ]);
  const bound = Map.groupBy(bindings, (b) => b.agent_id);
  ids.forEach((id, i) => {
    if (boots[i]) context.bootMs.set(id, Number(boots[i]));
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
    .filter(
      (s): s is { agent: AgentRow; step: Step } => s.step === 'wake' || (s.step !== null && !held.has(s.agent.id)),
    );
  return { steps, active, memory };
}

/** One pass: each agent's step done in its turn, a few at a time; says how many of each outcome. */
async function sweepOnce(
  context: HibernationContext,
  settings: HibernationSettings,
  queues: QueueSet,
): Promise<string> {
  const agents = await context.db
    .selectFrom('agents')
    .selectAll()
    .where('status', 'in', ['running', 'active', 'suspended'])
    .where('container_id', 'is not', null)
    .execute();
  if (!agents.length) return 'no agents';
  const { steps, active, memory } = await stepsDue(context, settings, agents);
  const done: Record<string, number> = {};
  for (let i = 0; i < steps.length; i += SWEEP_CONCURRENCY) {
    await Promise.all(
      steps.slice(i, i + SWEEP_CONCURRENCY).map(async ({ agent, step }) => {
        try {
          // A never-recorded agent's idle time, kept (forward only: nothing for one recorded), so a pause does not restart it.
          await context.activity.touch(agent.id, active.get(agent.id)!);
          const outcome =
            step === 'pause'
              ? await pause(context, agent.id)
              : step === 'stop'
                ? await stop(context, agent.id)
                : step === 'recycle'
                  ? await recycle(context, agent, memory.get(agent.id)!)
                  : await queueWake(queues, agent);
          done[outcome] = (done[outcome] ?? 0) + 1;
        } catch (error) {
          // An operation on it is under way: the next sweep looks again.
          if (!isAgentBusy(error))
            context.log.warn(
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

/**
 * One pass over the agents that run or hibernate: what each needs now (hibernationStep), done in
 * its turn; a wake is queued (the job the scheduler waits on), never waited for here. One pass
 * at a time across workers: a pass that finds another under way does nothing.
 */
async function sweep(context: HibernationContext, settings: HibernationSettings, queues: QueueSet) {
  const { redis } = context;
  const lock = `${context.prefix}:hibernate-sweep`;
  const token = String(Math.random());
  if ((await redis.set(lock, token, 'PX', Math.max(60_000, context.sweepEveryMs * 10), 'NX')) !== 'OK')
    return 'a sweep is under way';
  try {
    return await sweepOnce(context, settings, queues);
  } finally {
    if ((await redis.get(lock)) === token) await redis.del(lock);
  }
}

/**
 * Hibernation of idle agents (issue 30): paused by the engine (memory kept, no CPU) after the plan's
 * idle time, stopped later (state disk kept), and woken by whatever needs them, transparently: the
 * caller waits for the resume or the boot. One wake per agent at a time: in this process the
 * callers share one promise, across processes the agent's turn makes the later ones find it awake.
 */
export function agentHibernation(options: AgentHibernationOptions) {
  const { activity } = options;
  const context: HibernationContext = { ...options, bootKey: `${options.prefix}:agent-boot-ms`, bootMs: new Map() };
  const settings = hibernationSettings(context);
  const waking = new Map<string, Promise<AgentRow>>();

  /** Wakes the agent (resume from a pause, start from a stop) and answers it awake; callers in this process share one wake. */
  function wake(agentId: string): Promise<AgentRow> {
    const under = waking.get(agentId);
    if (under) return under;
    const woken = resume(context, agentId).finally(() => waking.delete(agentId));
    waking.set(agentId, woken);
    return woken;
  }

  return {
    pause: (agentId: string) => pause(context, agentId),
    stop: (agentId: string) => stop(context, agentId),
    wake,
    wakeLeadMs: (agentId: string) => wakeLeadMs(context, agentId),

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

    sweep: (queues: QueueSet): Promise<string> => sweep(context, settings, queues),
  };
}

export type AgentHibernation = ReturnType<typeof agentHibernation>;
