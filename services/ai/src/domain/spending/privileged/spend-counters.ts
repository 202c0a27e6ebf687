import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sql, type Plan } from '@agentyard/db';
import { spendExhaustedSetKey } from '@agentyard/proto-schemas';
import type { SystemDb } from '@agentyard/db/system';
import { allowanceOf, monthStart, type Allowances } from '../allowance.ts';
import { creditPoolUsd } from '../ledger.ts';
import { spendingLimits } from '../limits.ts';
import type { Log } from '@agentyard/http';

/** Counters hold integer nano-dollars: sums of many small costs stay exact. */
const NANOS = 1e9;
export const toNanos = (usd: number) => Math.round(usd * NANOS);
const MONTH_TTL_SECONDS = 40 * 24 * 3600;

/**
 * Admission, atomically: refuses when the call's reservation does not fit under the agent's or the
 * user's own limit (spend plus open reservations plus this one), or under allowance plus credits,
 * or when the user already has the most calls open; otherwise reserves `amount`. As every
 * reservation is an upper bound of its call's cost, the month's spend never passes the budget, and
 * a refused call means less than one reservation is left.
 * KEYS: month counters, budget, exhausted set, the user's open calls (hold id -> deadline).
 * ARGV: user, agent ('' none), amount, allowance, set TTL, now (ms), hold id, deadline (ms), most open calls, open-calls TTL (ms).
 */
const RESERVE = `
if redis.call('exists', KEYS[1]) == 0 then return 'seed-month' end
if redis.call('exists', KEYS[2]) == 0 then return 'seed-budget' end
local amount = tonumber(ARGV[3])
local m = redis.call('hmget', KEYS[1], 'spent', 'reserved')
local used = (tonumber(m[1]) or 0) + (tonumber(m[2]) or 0)
local b = redis.call('hmget', KEYS[2], 'credits', 'limit')
local agent = ARGV[2]
if agent ~= '' then
  local agentLimit = tonumber(redis.call('hget', KEYS[2], 'al:' .. agent))
  if agentLimit then
    local a = redis.call('hmget', KEYS[1], 'a:' .. agent, 'ar:' .. agent)
    if (tonumber(a[1]) or 0) + (tonumber(a[2]) or 0) + amount > agentLimit then return 'agent-limit' end
  end
end
local limit = tonumber(b[2]) or -1
if limit >= 0 and used + amount > limit then return 'user-limit' end
local budget = tonumber(ARGV[4]) + (tonumber(b[1]) or 0)
if used >= budget then
  redis.call('sadd', KEYS[3], ARGV[1])
  redis.call('expire', KEYS[3], ARGV[5])
  return 'credits'
end
if used + amount > budget then return 'credits-short' end
redis.call('zremrangebyscore', KEYS[4], '-inf', ARGV[6])
if redis.call('zcard', KEYS[4]) >= tonumber(ARGV[9]) then return 'busy' end
redis.call('zadd', KEYS[4], ARGV[8], ARGV[7])
redis.call('pexpire', KEYS[4], ARGV[10])
redis.call('hincrby', KEYS[1], 'reserved', ARGV[3])
if agent ~= '' then redis.call('hincrby', KEYS[1], 'ar:' .. agent, ARGV[3]) end
redis.call('srem', KEYS[3], ARGV[1])
return 'ok'`;

/** Settlement: the call is no longer open; the reservation leaves, the real cost stays. KEYS: month counters, open calls. ARGV: agent, reserved, cost, hold id. */
const SETTLE = `
redis.call('zrem', KEYS[2], ARGV[4])
if redis.call('exists', KEYS[1]) == 0 then return 0 end
local function settle(reservedField, spentField)
  local left = redis.call('hincrby', KEYS[1], reservedField, '-' .. ARGV[2])
  if left < 0 then redis.call('hset', KEYS[1], reservedField, 0) end
  redis.call('hincrby', KEYS[1], spentField, ARGV[3])
end
settle('reserved', 'spent')
if ARGV[1] ~= '' then settle('ar:' .. ARGV[1], 'a:' .. ARGV[1]) end
return 1`;

/** Fills a missing hash from the database's answer (another process may have filled it first). KEYS: the hash. ARGV: TTL, field, value, ... */
const SEED = `
if redis.call('exists', KEYS[1]) == 1 then return 0 end
for i = 2, #ARGV, 2 do redis.call('hset', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('expire', KEYS[1], ARGV[1])
return 1`;

type SpendRedis = Redis & {
  spendReserve(
    month: string,
    budget: string,
    exhausted: string,
    open: string,
    userId: string,
    agentId: string,
    amount: number,
    allowance: number,
    ttl: number,
    now: number,
    holdId: string,
    deadline: number,
    mostOpen: number,
    openTtl: number,
  ): Promise<string>;
  spendSettle(
    month: string,
    open: string,
    agentId: string,
    reserved: number,
    cost: number,
    holdId: string,
  ): Promise<number>;
  spendSeed(key: string, ttl: number, ...fields: (string | number)[]): Promise<number>;
};

export function defineSpendCommands(redis: Redis): SpendRedis {
  const r = redis as SpendRedis;
  if (!r.spendReserve) {
    redis.defineCommand('spendReserve', { numberOfKeys: 4, lua: RESERVE });
    redis.defineCommand('spendSettle', { numberOfKeys: 2, lua: SETTLE });
    redis.defineCommand('spendSeed', { numberOfKeys: 1, lua: SEED });
  }
  return r;
}

/** Why admission refused a call. */
export type Refusal = 'credits' | 'credits-short' | 'user-limit' | 'agent-limit' | 'busy';

/** A reservation: settled once, with the call's real cost (0 when nothing was served). */
export interface Hold {
  id: string;
  monthKey: string;
  openKey: string;
  agentId: string;
  amount: number;
  settled: boolean;
}

export interface SpendCountersOptions {
  prefix: string;
  allowances: Allowances;
  /** How long credits and limits read from the database are trusted before they are read again. */
  budgetTtlSeconds: number;
  /** The most budgeted calls one user may have open at once (each holds a reservation). */
  concurrentCallsPerUser: number;
  /** How long an open call counts when it is never settled (its process died): longer than any call lasts. */
  openCallTtlMs: number;
  /** Cost of the user's usage rows this process has not written yet. */
  pendingCost: (userId: string) => number;
  log: Pick<Log, 'error'>;
}

export const exhaustedSetKey = spendExhaustedSetKey;

/**
 * Each user's month spend and open reservations, in Redis where every gateway process sees them:
 * one script per call checks and reserves, one settles. Credits and limits are read from the
 * database only when Redis has no fresh copy (seeded on a miss, dropped when they change), and the
 * month's spend is seeded from the usage rows when missing, so a Redis restart resets nothing.
 */
export class SpendCounters {
  private readonly redis: SpendRedis;
  private readonly system: SystemDb;
  private readonly options: SpendCountersOptions;

  constructor(redis: Redis, system: SystemDb, options: SpendCountersOptions) {
    this.redis = defineSpendCommands(redis);
    this.system = system;
    this.options = options;
  }

  private monthKey = (userId: string, at: Date) =>
    `${this.options.prefix}:spend:${at.toISOString().slice(0, 7)}:${userId}`;
  private budgetKey = (userId: string) => `${this.options.prefix}:spend-budget:${userId}`;
  private openKey = (userId: string) => `${this.options.prefix}:spend-open:${userId}`;

  get concurrentCallsPerUser(): number {
    return this.options.concurrentCallsPerUser;
  }

  allowanceOf(plan: Plan): number {
    return allowanceOf(this.options.allowances, plan);
  }

  /** Reserves `amountUsd` for a call of `userId`'s (through `agentId`, if any), or answers why not. */
  async reserve(
    userId: string,
    agentId: string | null,
    plan: Plan,
    amountUsd: number,
    now = new Date(),
  ): Promise<Hold | Refusal> {
    const monthKey = this.monthKey(userId, now);
    const openKey = this.openKey(userId);
    const id = randomUUID();
    const amount = toNanos(amountUsd);
    const allowance = toNanos(allowanceOf(this.options.allowances, plan));
    // At most one seed of each kind: a third answer asking for one means the keys vanished meanwhile.
    for (let attempt = 0; attempt < 3; attempt++) {
      const at = now.getTime();
      const { concurrentCallsPerUser, openCallTtlMs } = this.options;
      const answer = await this.redis.spendReserve(
        monthKey,
        this.budgetKey(userId),
        exhaustedSetKey(this.options.prefix, now),
        openKey,
        userId,
        agentId ?? '',
        amount,
        allowance,
        MONTH_TTL_SECONDS,
        at,
        id,
        at + openCallTtlMs,
        concurrentCallsPerUser,
        openCallTtlMs,
      );
      if (answer === 'ok') return { id, monthKey, openKey, agentId: agentId ?? '', amount, settled: false };
      if (answer === 'seed-month') await this.seedMonth(monthKey, userId, now);
      else if (answer === 'seed-budget') await this.seedBudget(userId, now);
      else return answer as Refusal;
    }
    throw new Error('spend counters vanished while being seeded');
  }

  /** The reservation leaves; the real cost stays (0: nothing was served). Never throws: a failure is logged. */
  settle(hold: Hold, costUsd: number): void {
    if (hold.settled) return;
    hold.settled = true;
    this.redis
      .spendSettle(hold.monthKey, hold.openKey, hold.agentId, hold.amount, toNanos(costUsd), hold.id)
      .catch((error: Error) =>
        this.options.log.error(
          { err: { message: error.message } },
          'spend not settled in Redis: the month counter is reseeded from usage rows when it expires',
        ),
      );
  }

  /** Credits or limits changed: the next call reads them again, and an exhausted user is looked at again. */
  async budgetChanged(userId: string, now = new Date()): Promise<void> {
    await this.redis.multi().del(this.budgetKey(userId)).srem(exhaustedSetKey(this.options.prefix, now), userId).exec();
  }

  /** Plans changed (a subscription): allowances may have grown, so every paused user is looked at again by their next call. */
  async plansChanged(now = new Date()): Promise<void> {
    await this.redis.del(exhaustedSetKey(this.options.prefix, now));
  }

  private async seedMonth(key: string, userId: string, now: Date): Promise<void> {
    const rows = await this.system
      .selectFrom('usage_daily')
      .select(['agent_id', sql<string>`sum(cost_usd)`.as('cost')])
      .where('user_id', '=', userId)
      .where('day', '>=', monthStart(now))
      .groupBy('agent_id')
      .execute();
    const total = rows.reduce((sum, r) => sum + Number(r.cost), 0) + this.options.pendingCost(userId);
    const agents = rows.filter((r) => r.agent_id !== '').flatMap((r) => [`a:${r.agent_id}`, toNanos(Number(r.cost))]);
    await this.redis.spendSeed(key, MONTH_TTL_SECONDS, 'spent', toNanos(total), 'reserved', 0, ...agents);
  }

  private async seedBudget(userId: string, now: Date): Promise<void> {
    const credits = await creditPoolUsd(this.system, userId, monthStart(now));
    const limits = await spendingLimits(this.system, userId);
    const agents = limits.agents.flatMap((a) => [`al:${a.agentId}`, toNanos(a.monthlyUsd)]);
    await this.redis.spendSeed(
      this.budgetKey(userId),
      this.options.budgetTtlSeconds,
      'credits',
      toNanos(credits),
      'limit',
      limits.monthlyUsd === null ? -1 : toNanos(limits.monthlyUsd),
      ...agents,
    );
  }
}
