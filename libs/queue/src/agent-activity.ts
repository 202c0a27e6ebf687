import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface AgentActivityOptions {
  /** Key prefix shared by every process of one platform (QUEUE_PREFIX). */
  prefix: string;
  /** A process writes an agent's activity at most this often (a busy agent costs one write per period). */
  everyMs: number;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * When each agent last did something that needed it (a chat, the Control UI, a scheduled prompt, a
 * model call of its own, an open socket...): one sorted set in Redis, agent id → last time (ms),
 * which the hibernation sweep reads to find idle agents. Written at most every `everyMs` per agent
 * and process, only ever forward (ZADD GT), and never in the way of what it records: a Redis
 * failure is logged, not thrown. The record knows when it began (`recordedSince`): a Redis that
 * restarted without its data begins it again, and an agent missing from it was not idle before.
 */
export function agentActivity(redis: Redis, options: AgentActivityOptions) {
  const key = `${options.prefix}:agent-activity`;
  const holdsKey = (agentId: string) => `${options.prefix}:agent-holds:${agentId}`;
  const sinceKey = `${options.prefix}:agent-activity-since`;
  // A lease outlives many missed renewals (a process starved of CPU renews late).
  const leaseMs = Math.max(60_000, options.everyMs * 6);
  const written = new Map<string, number>();

  const touch = async (agentId: string, at = Date.now()): Promise<void> => {
    if (at - (written.get(agentId) ?? 0) < options.everyMs) return;
    written.set(agentId, at);
    // Bounded: a process that sees many agents forgets the oldest of its throttle marks.
    if (written.size > 50_000) written.delete(written.keys().next().value!);
    try {
      await redis.zadd(key, 'GT', at, agentId);
    } catch (error) {
      written.delete(agentId);
      options.log?.warn({ agentId, err: { message: (error as Error).message } }, 'agent activity not recorded');
    }
  };

  return {
    touch,

    /**
     * Keeps the agent from hibernating while work runs (a turn, an open socket): a lease of its own
     * in Redis (`<prefix>:agent-holds:<agentId>`, hold → expiry), renewed every period and removed
     * by the returned release, which also records the activity. A holder that dies without
     * releasing lets go when its lease lapses (`leaseMs`). Resolves once the lease is written.
     */
    async hold(agentId: string): Promise<() => void> {
      const holdId = randomUUID();
      const holds = holdsKey(agentId);
      const renew = () =>
        redis
          .multi()
          .zadd(holds, Date.now() + leaseMs, holdId)
          .pexpire(holds, leaseMs)
          .exec()
          .catch((error: Error) =>
            options.log?.warn({ agentId, err: { message: error.message } }, 'agent hold not renewed'),
          );
      await renew();
      const timer = setInterval(() => void renew(), options.everyMs);
      timer.unref();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        clearInterval(timer);
        written.delete(agentId);
        void redis
          .zrem(holds, holdId)
          .catch(() => undefined)
          .then(() => touch(agentId));
      };
    },

    /** The agents among these that something holds awake now (a turn, an open socket). */
    async held(agentIds: string[]): Promise<Set<string>> {
      if (!agentIds.length) return new Set();
      const now = Date.now();
      const pipeline = redis.pipeline();
      for (const id of agentIds) pipeline.zcount(holdsKey(id), now, '+inf');
      const counts = (await pipeline.exec()) ?? [];
      return new Set(agentIds.filter((_, i) => Number(counts[i]?.[1] ?? 0) > 0));
    },

    /** The last activity of each agent asked for (ms), null for one never recorded. */
    async lastSeen(agentIds: string[]): Promise<Map<string, number | null>> {
      if (!agentIds.length) return new Map();
      const scores = await redis.zmscore(key, ...agentIds);
      return new Map(
        agentIds.map((id, i) => [id, scores[i] === null || scores[i] === undefined ? null : Number(scores[i])]),
      );
    },

    /**
     * When this record began (ms): written by the first reader to find it missing, which is the first
     * look after Redis came back empty. Before it, nothing is known of any agent's activity.
     */
    async recordedSince(): Promise<number> {
      await redis.set(sinceKey, Date.now(), 'NX');
      return Number(await redis.get(sinceKey));
    },

    /** Forgets a removed agent. */
    async forget(agentId: string): Promise<void> {
      written.delete(agentId);
      await redis.zrem(key, agentId);
      await redis.del(holdsKey(agentId));
    },
  };
}

export type AgentActivity = ReturnType<typeof agentActivity>;
