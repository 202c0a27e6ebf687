import type { Redis } from 'ioredis';
import { BridgeErrors } from '../errors.ts';

/** Agent-to-agent messages per day by plan (BUS_DAILY_MESSAGE_LIMITS); no plan and unknown plans count as solo. */
const FALLBACK_PLAN = 'solo';
// Counters outlive their UTC day by a day, then Redis drops them.
const COUNTER_TTL_SECONDS = 2 * 24 * 3600;

/** Parses `solo:100,collective:500,...`; the config schema has already checked the shape. */
export function parseDailyLimits(spec: string): Map<string, number> {
  return new Map(
    spec
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry) => {
        const [plan, limit] = entry.split(':') as [string, string];
        return [plan, Number(limit)];
      }),
  );
}

export interface BusQuota {
  /** Counts one message of the user's today, or refuses it (429) when the plan's limit is reached. */
  take(userId: string, plan: string): Promise<{ release(): Promise<void> }>;
}

/**
 * A per-user, per-UTC-day counter in Redis: INCR is atomic, so concurrent sends never both take the
 * last unit. A refused or undone send gives its unit back, so the counter is the accepted messages.
 */
export function busQuota(
  redis: Redis,
  keyPrefix: string,
  limits: Map<string, number>,
  now: () => number = Date.now,
): BusQuota {
  const effectivePlan = (plan: string) => (limits.has(plan) ? plan : FALLBACK_PLAN);
  return {
    async take(userId, plan) {
      const day = new Date(now()).toISOString().slice(0, 10);
      const key = `${keyPrefix}:bus-daily:${userId}:${day}`;
      let count: number;
      try {
        const results = await redis.multi().incr(key).expire(key, COUNTER_TTL_SECONDS).exec();
        const [error, value] = results?.[0] ?? [new Error('no reply'), null];
        if (error) throw error;
        count = Number(value);
      } catch {
        throw BridgeErrors.quotaUnavailable();
      }
      const release = async () => {
        await redis.decr(key).catch(() => undefined);
      };
      const counted = effectivePlan(plan);
      const limit = limits.get(counted) ?? 0;
      if (count > limit) {
        await release();
        throw BridgeErrors.dailyLimitReached(counted, limit);
      }
      return { release };
    },
  };
}
