import type { Redis } from 'ioredis';
import type { Log } from '@agentyard/http';
import type { MinuteLimits } from './minute-limits.ts';

const MINUTE_MS = 60_000;

// The edge's rate-limit windows, for one caller's AI calls (services/edge/src/plugins/rate-limits.ts):
// a count per window in Redis that expires a window after its first unit, its TTL the Retry-After.
// Admission refuses while the tokens counted this window have reached their limit, else counts the
// request against its own. Answers [1, 0, 0] admitted, or [0, ms until the refusing window ends, 1 tokens / 2 requests].
const ADMIT_SCRIPT = `
local window = tonumber(ARGV[1])
local limits = { tonumber(ARGV[3]), tonumber(ARGV[2]) }
for i, key in ipairs({ KEYS[2], KEYS[1] }) do
  local max = limits[i]
  if max > 0 and tonumber(redis.call('GET', key) or '0') >= max then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then
      redis.call('PEXPIRE', key, window)
      ttl = window
    end
    return { 0, ttl, i }
  end
end
if limits[2] > 0 and redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], window) end
return { 1, 0, 0 }`;

// Adds an answer's tokens to its window (a new window expires after its length).
const SETTLE_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

type WindowRedis = Redis & {
  agentyardAdmitMinute(
    requestsKey: string,
    tokensKey: string,
    windowMs: number,
    maxRequests: number,
    maxTokens: number,
  ): Promise<[number, number, number]>;
  agentyardSettleMinute(tokensKey: string, windowMs: number, tokens: number): Promise<number>;
};

/** A call admitted under a caller's limits: its answer's tokens are counted once it is served. */
export interface MinuteTicket {
  settle(tokens: number): void;
}

/**
 * Requests and tokens per minute of one caller (an agent, a user API key), counted in Redis so every gateway
 * process shares them. Tokens are counted on the answer's real usage, so a call admitted under the
 * limit may take its window past it; the next call is then refused until the window ends. Redis
 * failing lets calls through uncounted (as the edge's limits do): these limits pace, budgets bound spend.
 */
export class MinuteWindows {
  private readonly redis: WindowRedis;
  private readonly prefix: string;
  private readonly log: Pick<Log, 'warn'>;

  constructor(redis: Redis, prefix: string, log: Pick<Log, 'warn'>) {
    this.redis = redis as WindowRedis;
    if (!this.redis.agentyardAdmitMinute) {
      redis.defineCommand('agentyardAdmitMinute', { numberOfKeys: 2, lua: ADMIT_SCRIPT });
      redis.defineCommand('agentyardSettleMinute', { numberOfKeys: 1, lua: SETTLE_SCRIPT });
    }
    this.prefix = `${prefix}:ai-minute:`;
    this.log = log;
  }

  /** Counts a call of `caller` against its limits: a ticket, or the seconds until it may call again. */
  async admit(
    caller: string,
    limits: MinuteLimits,
  ): Promise<{ ticket: MinuteTicket } | { refusedBy: keyof MinuteLimits; retryAfterSeconds: number }> {
    const requestsKey = `${this.prefix}${caller}:requests`;
    const tokensKey = `${this.prefix}${caller}:tokens`;
    let answer: [number, number, number];
    try {
      answer = await this.redis.agentyardAdmitMinute(
        requestsKey,
        tokensKey,
        MINUTE_MS,
        limits.requestsPerMinute ?? 0,
        limits.tokensPerMinute ?? 0,
      );
    } catch (error) {
      this.log.warn(
        { caller, reason: (error as Error).message },
        'per-minute limits unavailable: call let through uncounted',
      );
      return { ticket: { settle: () => {} } };
    }
    const [admitted, ttlMs, refusing] = answer;
    if (!admitted)
      return {
        refusedBy: refusing === 1 ? 'tokensPerMinute' : 'requestsPerMinute',
        retryAfterSeconds: Math.max(1, Math.ceil(ttlMs / 1000)),
      };
    if (limits.tokensPerMinute === null) return { ticket: { settle: () => {} } };
    return {
      ticket: {
        settle: (tokens) => {
          if (tokens <= 0) return;
          this.redis
            .agentyardSettleMinute(tokensKey, MINUTE_MS, Math.ceil(tokens))
            .catch((error: Error) => this.log.warn({ caller, reason: error.message }, 'tokens per minute not counted'));
        },
      },
    };
  }
}
