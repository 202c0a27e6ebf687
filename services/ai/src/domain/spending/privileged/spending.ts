import { redisConnection } from '@agentyard/queue';
import type { SystemDb } from '@agentyard/db/system';
import type { AiConfig } from '../../../config.ts';
import type { CallerLookups } from '../../privileged/caller-lookups.ts';
import type { UsageWriter } from '../../privileged/usage-writer.ts';
import { SpendAdmission } from '../admission.ts';
import { parseAllowances } from '../allowance.ts';
import { SpendCounters } from './spend-counters.ts';
import type { Log } from '@agentyard/http';

export interface Spending {
  counters: SpendCounters;
  /** null when SPENDING_ENFORCED is off: calls are then not reserved nor refused for spend. */
  admission: SpendAdmission | null;
  /** Credits that arrive, and plan changes, reach the counters through the lookups' change notices. */
  follow(lookups: CallerLookups): void;
  close(): Promise<void>;
}

/** The AI service's spend counters on a Redis connection of their own (a command times out rather than hanging a call). */
export function createSpending(
  config: AiConfig,
  system: SystemDb,
  writer: UsageWriter,
  log: Pick<Log, 'error'>,
): Spending {
  const redis = redisConnection(
    config.REDIS_URL,
    { maxRetriesPerRequest: 1, commandTimeout: 5000 },
    { purpose: 'spend counters', log },
  );
  const counters = new SpendCounters(redis, system, {
    prefix: config.QUEUE_PREFIX,
    allowances: parseAllowances(config.PLAN_MONTHLY_ALLOWANCE_USD),
    budgetTtlSeconds: config.SPEND_BUDGET_TTL_SECONDS,
    concurrentCallsPerUser: config.SPEND_CONCURRENT_CALLS_PER_USER,
    // A call may try two models, each for at most the stream deadline; a minute more for the rest.
    openCallTtlMs: 2 * Math.max(config.PROVIDER_TIMEOUT_MS, config.PROVIDER_STREAM_TIMEOUT_MS) + 60_000,
    pendingCost: (userId) => writer.pendingCost(userId),
    log,
  });
  const dropped = (error: Error) =>
    log.error(
      { err: { message: error.message } },
      'spend budget not dropped from Redis: it is read again once it expires',
    );
  return {
    counters,
    admission: config.SPENDING_ENFORCED ? new SpendAdmission(counters, config.DEFAULT_MAX_TOKENS) : null,
    follow(lookups) {
      lookups.events.on('notice', (payload: string) => {
        const [table, id] = payload.split(':', 2);
        if (table === 'credit_entries' && id) counters.budgetChanged(id).catch(dropped);
        else if (table === 'subscriptions') counters.plansChanged().catch(dropped);
      });
    },
    async close() {
      redis.disconnect();
    },
  };
}
