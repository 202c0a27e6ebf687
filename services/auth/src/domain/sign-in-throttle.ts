import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Redis } from 'ioredis';

export interface SignInThrottleSettings {
  /** Failed attempts an account may have before each further attempt waits. */
  freeFailures: number;
  /** The first wait; each further failure doubles it. */
  firstDelayMs: number;
  /** No single wait is longer. */
  maxDelayMs: number;
  /** An account's count is forgotten this long after its last admitted attempt. */
  forgetAfterMs: number;
}

/** The defaults (config: SIGN_IN_FREE_FAILURES, SIGN_IN_FIRST_DELAY_SECONDS, SIGN_IN_MAX_DELAY_SECONDS, SIGN_IN_FORGET_SECONDS). */
export const SIGN_IN_THROTTLE: SignInThrottleSettings = {
  freeFailures: 5,
  firstDelayMs: 1000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
};

const CONNECT_WAIT_MS = 5000;

/** How long the next attempt waits after `failures` failed ones (0 while they are free). */
export function delayAfter(failures: number, settings: SignInThrottleSettings = SIGN_IN_THROTTLE): number {
  if (failures < settings.freeFailures) return 0;
  const doublings = failures - settings.freeFailures;
  return doublings >= 30 ? settings.maxDelayMs : Math.min(settings.maxDelayMs, settings.firstDelayMs * 2 ** doublings);
}

// One atomic step on Redis's clock: refuse while the account waits (answering the ms left), else
// count this attempt as a failure up front (a success clears it), so concurrent attempts cannot
// all slip in before the first failure is written.
const ADMIT = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'failures', 'until')
local failures = tonumber(state[1]) or 0
local untilMs = tonumber(state[2]) or 0
if untilMs > nowMs then return untilMs - nowMs end
failures = failures + 1
local free, first, max, forget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local delay = 0
if failures >= free then
  local doublings = failures - free
  if doublings >= 30 then delay = max else delay = math.min(max, first * (2 ^ doublings)) end
end
redis.call('HSET', KEYS[1], 'failures', failures, 'until', nowMs + delay)
redis.call('PEXPIRE', KEYS[1], delay + forget)
return 0
`;

/**
 * Failed password sign-ins per account, in Redis (shared by every auth process), checked before
 * the password hash is: after `freeFailures` failures each attempt waits 1 s, 2 s, 4 s ... at most
 * `maxDelayMs`; a success clears the count, and it is forgotten `forgetAfterMs` after the last
 * attempt. Any email is counted alike, so the answers say nothing about which accounts exist.
 */
export class SignInThrottle {
  #redis: Redis;
  #prefix: string;
  #settings: SignInThrottleSettings;
  #onError: (error: Error) => void;

  constructor(redis: Redis, prefix: string, onError: (error: Error) => void, settings: SignInThrottleSettings = SIGN_IN_THROTTLE) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#settings = settings;
    this.#onError = onError;
  }

  /** The Redis key of one account; the address itself never reaches Redis. */
  key(email: string): string {
    return `${this.#prefix}:sign-in-failures:${createHash('sha256').update(email.trim().toLowerCase()).digest('hex')}`;
  }

  /**
   * Null when this attempt may check the password (it is counted as a failure until `succeeded`),
   * else the seconds to wait. Without Redis, attempts are let through, as the edge's limits are.
   */
  async admit(email: string): Promise<number | null> {
    const { freeFailures, firstDelayMs, maxDelayMs, forgetAfterMs } = this.#settings;
    try {
      // A first connection still being made (a process just started) is waited for, not skipped;
      // a lost one (reconnecting) lets attempts through at once.
      if (this.#redis.status === 'connecting' || this.#redis.status === 'connect') await once(this.#redis, 'ready', { signal: AbortSignal.timeout(CONNECT_WAIT_MS) });
      const waitMs = Number(await this.#redis.eval(ADMIT, 1, this.key(email), freeFailures, firstDelayMs, maxDelayMs, forgetAfterMs));
      return waitMs > 0 ? Math.ceil(waitMs / 1000) : null;
    } catch (error) {
      this.#onError(error as Error);
      return null;
    }
  }

  /** The account proved its password (or got a new one): its count starts again. */
  async succeeded(email: string): Promise<void> {
    await this.#redis.del(this.key(email)).catch((error: Error) => this.#onError(error));
  }
}
