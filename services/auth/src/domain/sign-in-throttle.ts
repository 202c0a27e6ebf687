import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { isIPv4, isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';

export interface SignInThrottleSettings {
  /** Failed attempts an account may have from one network before each further attempt from there waits. */
  freeFailures: number;
  /** The first wait; each further failure doubles it. */
  firstDelayMs: number;
  /** No single wait is longer. */
  maxDelayMs: number;
  /** An account's count on a network is forgotten this long after its last admitted attempt from there. */
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
 * The client network an attempt comes from: the /24 of an IPv4 address, the /64 of an IPv6 one
 * (what one household, office or host usually holds), so an attacker elsewhere counts apart.
 */
export function clientNetwork(ip: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1] ?? (isIPv4(ip) ? ip : null);
  if (v4) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return ip;
  // An embedded IPv4 tail is two groups; `::` stands for the zero groups that make eight.
  const groups = (part: string | undefined) =>
    part ? part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])) : [];
  const [left, right] = address.split('::') as [string, string | undefined];
  const head = groups(left);
  const tail = groups(right);
  const all =
    right === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return `${all
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const normalized = (email: string) => email.trim().toLowerCase();

/**
 * Failed password checks per account and client network (`clientNetwork`), in Redis (shared by
 * every auth process), checked before the password hash is: after `freeFailures` failures from one
 * network each attempt from there waits 1 s, 2 s, 4 s ... at most `maxDelayMs`, while the owner
 * signing in from elsewhere is not held back by an attacker's failures. A success clears that
 * network's count, a password reset every network's of the account; a count is forgotten
 * `forgetAfterMs` after its last attempt. Any email is counted alike, so the answers say nothing
 * about which accounts exist; neither the address nor the network reaches Redis, only hashes.
 */
export class SignInThrottle {
  #redis: Redis;
  #prefix: string;
  #settings: SignInThrottleSettings;
  #onError: (error: Error) => void;

  constructor(
    redis: Redis,
    prefix: string,
    onError: (error: Error) => void,
    settings: SignInThrottleSettings = SIGN_IN_THROTTLE,
  ) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#settings = settings;
    this.#onError = onError;
  }

  /** The account's generation: a password reset starts a new one, leaving every earlier count behind. */
  #generationKey(email: string): string {
    return `${this.#prefix}:sign-in-generation:${sha256(normalized(email))}`;
  }

  /** The Redis key of one account's count on the network of `ip`; a generation in use is kept as long as its counts live. */
  async key(email: string, ip: string): Promise<string> {
    const generation = (await this.#redis.getex(this.#generationKey(email), 'PX', this.#generationLifeMs)) ?? '0';
    return `${this.#prefix}:sign-in-failures:${sha256(`${generation}\n${normalized(email)}\n${clientNetwork(ip)}`)}`;
  }

  /**
   * Null when this attempt may check the password (it is counted as a failure until `succeeded`),
   * else the seconds to wait. Without Redis, attempts are let through, as the edge's limits are.
   */
  async admit(email: string, ip: string): Promise<number | null> {
    const { freeFailures, firstDelayMs, maxDelayMs, forgetAfterMs } = this.#settings;
    try {
      // A first connection still being made (a process just started) is waited for, not skipped;
      // a lost one (reconnecting) lets attempts through at once.
      if (this.#redis.status === 'connecting' || this.#redis.status === 'connect')
        await once(this.#redis, 'ready', { signal: AbortSignal.timeout(CONNECT_WAIT_MS) });
      const waitMs = Number(
        await this.#redis.eval(
          ADMIT,
          1,
          await this.key(email, ip),
          freeFailures,
          firstDelayMs,
          maxDelayMs,
          forgetAfterMs,
        ),
      );
      return waitMs > 0 ? Math.ceil(waitMs / 1000) : null;
    } catch (error) {
      this.#onError(error as Error);
      return null;
    }
  }

  /** The account proved its password from this network: the count there starts again. */
  async succeeded(email: string, ip: string): Promise<void> {
    try {
      await this.#redis.del(await this.key(email, ip));
    } catch (error) {
      this.#onError(error as Error);
    }
  }

  /**
   * The account got a new password (a reset proved the mailbox): every network's count starts
   * again, under a new random generation. A generation outlives every count made under it (each
   * attempt extends it as far as its count can live), so no count left behind comes back.
   */
  async reset(email: string): Promise<void> {
    await this.#redis
      .set(this.#generationKey(email), randomUUID(), 'PX', this.#generationLifeMs)
      .catch((error: Error) => this.#onError(error));
  }

  /** Longer than any count lives after its last attempt: the longest wait plus `forgetAfterMs`. */
  get #generationLifeMs(): number {
    return this.#settings.maxDelayMs + this.#settings.forgetAfterMs;
  }
}
