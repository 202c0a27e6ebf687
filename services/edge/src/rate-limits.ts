import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { HttpError } from '@agentyard/http';
import type { Surface } from '@agentyard/identity';

/** A rate-limit scope of spec §8: per client IP, counted in Redis so it holds across edge processes. */
export interface Scope {
  name: string;
  surface: Surface;
  max: number;
  windowMs: number;
  message: string;
  matches(method: string, path: string): boolean;
}

const MINUTE = 60_000;
const under = (prefix: string) => (_m: string, path: string) => path === prefix || path.startsWith(`${prefix}/`);
const exactly = (method: string, url: string) => (m: string, path: string) => m === method && path === url;

/**
 * The scopes, most general first: when several apply, every one counts the request and the
 * headers describe the last (most specific) one. Register, forgot- and reset-password and demo
 * chat have no number in the spec; ours are below and documented in the README.
 */
export const SCOPES: Scope[] = [
  { name: 'backend-api', surface: 'backend', max: 120, windowMs: MINUTE, message: 'Too many requests, please slow down.', matches: under('/api') },
  { name: 'backend-ai', surface: 'backend', max: 30, windowMs: MINUTE, message: 'AI rate limit exceeded.', matches: under('/api/ai') },
  { name: 'backend-deployments', surface: 'backend', max: 5, windowMs: MINUTE, message: 'Deployment rate limit exceeded.', matches: exactly('POST', '/api/deployments') },
  { name: 'web-gateway', surface: 'web', max: 100, windowMs: MINUTE, message: 'Too many requests', matches: (m, p) => under('/api/v1/gateway')(m, p) || under('/api/agents')(m, p) },
  { name: 'web-chat', surface: 'web', max: 60, windowMs: MINUTE, message: 'Too many requests', matches: under('/api/chat') },
  { name: 'web-instance', surface: 'web', max: 30, windowMs: MINUTE, message: 'Too many requests', matches: under('/api/instance') },
  { name: 'web-provision', surface: 'web', max: 5, windowMs: MINUTE, message: 'Too many requests', matches: under('/api/provision') },
  { name: 'web-register', surface: 'web', max: 10, windowMs: 60 * MINUTE, message: 'Too many requests', matches: exactly('POST', '/api/register') },
  { name: 'web-forgot-password', surface: 'web', max: 5, windowMs: 15 * MINUTE, message: 'Too many requests', matches: exactly('POST', '/api/auth/forgot-password') },
  { name: 'web-reset-password', surface: 'web', max: 10, windowMs: 15 * MINUTE, message: 'Too many requests', matches: exactly('POST', '/api/auth/reset-password') },
  { name: 'web-demo-chat', surface: 'web', max: 10, windowMs: MINUTE, message: 'Too many requests', matches: exactly('POST', '/api/demo/chat') },
];

/** Applies `name=max` overrides (RATE_LIMITS) to the scopes of one surface. */
export function scopesFor(surface: Surface, overrides: string): Scope[] {
  const maxByName = new Map(overrides.split(',').map((e) => e.trim()).filter(Boolean).map((entry) => {
    const [name, value] = entry.split('=');
    const max = Number(value);
    if (!name || !SCOPES.some((s) => s.name === name) || !Number.isInteger(max) || max < 1) throw new Error(`RATE_LIMITS: bad entry ${entry}`);
    return [name, max] as const;
  }));
  return SCOPES.filter((s) => s.surface === surface).map((s) => ({ ...s, max: maxByName.get(s.name) ?? s.max }));
}

type Check = (request: FastifyRequest) => Promise<{ isAllowed: boolean; isExceeded?: boolean; max?: number; remaining?: number; ttlInSeconds?: number }>;

/** One check per scope (built once); returns the hook that counts a request against its scopes. */
export function rateLimiter(app: FastifyInstance & { createRateLimit(options: object): Check }, scopes: Scope[]) {
  const checks = scopes.map((scope) => ({
    scope,
    check: app.createRateLimit({ max: scope.max, timeWindow: scope.windowMs, keyGenerator: (request: FastifyRequest) => `${scope.name}:${request.ip}` }),
  }));
  return async function countRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const path = request.url.split('?', 1)[0]!;
    const matching = checks.filter(({ scope }) => scope.matches(request.method, path));
    if (matching.length === 0) return;
    // Every scope counts the request at once (from this process's leases, or with one script call to
    // Redis: windowLeases below); the answers are then read most general first.
    const results = await Promise.all(matching.map(({ check }) => check(request)));
    for (const [index, { scope }] of matching.entries()) {
      const result = results[index]!;
      if (result.isAllowed) continue;
      reply.header('RateLimit-Limit', result.max);
      reply.header('RateLimit-Remaining', result.remaining);
      reply.header('RateLimit-Reset', result.ttlInSeconds);
      if (result.isExceeded) {
        reply.header('Retry-After', result.ttlInSeconds);
        throw new HttpError(429, scope.message);
      }
    }
  };
}

// Leases units of each key's window: INCRBY by what is needed now plus a share of the headroom left
// (an eighth, at most LEASE_EXTRA_MAX), so the units of a window handed out by every edge process
// together never pass its count in Redis. A new window (or a key left without one) expires after its
// length. Answers [count after, units leased, ttl ms] per key.
const LEASE_EXTRA_MAX = 64;
const LEASE_SCRIPT = `
local answers = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[3 * i - 2])
  local max = tonumber(ARGV[3 * i - 1])
  local need = tonumber(ARGV[3 * i])
  local spare = max - tonumber(redis.call('GET', key) or '0') - need
  local units = need
  if spare > 0 then units = need + math.min(math.floor(spare / 8), ${LEASE_EXTRA_MAX}) end
  local count = redis.call('INCRBY', key, units)
  local ttl = window
  if count > units then ttl = redis.call('PTTL', key) end
  if count == units or ttl < 0 then
    redis.call('PEXPIRE', key, window)
    ttl = window
  end
  answers[#answers + 1] = count
  answers[#answers + 1] = units
  answers[#answers + 1] = ttl
end
return answers`;

type Counted = (error: Error | null, result?: { current: number; ttl: number }) => void;
type LeasingRedis = Redis & { agentyardLeaseWindows(...args: (string | number)[]): Promise<number[]> };

/** This process's part of one key's window: the units leased from Redis and how many it has counted. */
interface Lease {
  windowMs: number;
  max: number;
  /** The window's count as this process knows it: its last leased range's start plus what it counted since. */
  counted: number;
  /** The last unit leased (the window's count in Redis when it was leased). */
  end: number;
  /** No later than the window's end in Redis: the script's TTL counted from before the script was sent. */
  expiresAt: number;
  waiting: Counted[];
  leasing: boolean;
}

/**
 * The edge's Redis, for rate-limit leases: no offline queue and a 1 s command timeout, so when Redis
 * is gone or stops answering a request waiting for a lease hears an error within a second and is
 * let through uncounted (skipOnError), instead of waiting without end.
 */
export const rateLimitRedis = (url: string) => new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000 });

/**
 * A @fastify/rate-limit store on Redis that counts most requests without a round trip: each edge
 * process leases units of a window from Redis (the script above) and counts requests from its lease,
 * so a client far under its limit costs Redis one script call per lease instead of one per request.
 * Near the limit leases shrink to what is needed, one request each; once a window's count in Redis
 * has reached the limit every process refuses from its own lease until the window ends. Each unit
 * is leased to one process only, so the edge processes together never admit more than the limit. A
 * client whose requests are spread over several edge processes may be refused a few early (the
 * units the others hold unused), and units held by a process that stops are spent until the window
 * ends. The keys wanting a lease in one tick share one script call.
 */
export function windowLeases(redis: Redis, prefix: string) {
  const leasing = redis as LeasingRedis;
  if (!leasing.agentyardLeaseWindows) redis.defineCommand('agentyardLeaseWindows', { lua: LEASE_SCRIPT });
  const leases = new Map<string, Lease>();
  let wanting: [string, Lease][] = [];
  let sweepAt = 0;

  /** Counts waiting requests from the lease while it holds units (or the window is spent); true when none is left waiting. */
  const serve = (lease: Lease): boolean => {
    const time = Date.now();
    while (lease.waiting.length > 0 && time < lease.expiresAt && (lease.counted < lease.end || lease.end >= lease.max)) {
      lease.counted++;
      lease.waiting.shift()!(null, { current: lease.counted, ttl: lease.expiresAt - time });
    }
    return lease.waiting.length === 0;
  };
  const want = (key: string, lease: Lease) => {
    lease.leasing = true;
    if (wanting.push([key, lease]) === 1) process.nextTick(flush);
  };
  const flush = () => {
    const batch = wanting;
    wanting = [];
    const sentAt = Date.now();
    leasing.agentyardLeaseWindows(batch.length, ...batch.map(([key]) => prefix + key), ...batch.flatMap(([, lease]) => [lease.windowMs, lease.max, lease.waiting.length])).then(
      (answers) => {
        for (const [i, [key, lease]] of batch.entries()) {
          const [count, units, ttl] = answers.slice(3 * i, 3 * i + 3) as [number, number, number];
          Object.assign(lease, { counted: count - units, end: count, expiresAt: sentAt + ttl, leasing: false });
          if (!serve(lease)) want(key, lease); // requests that arrived while the lease was on its way
        }
      },
      (error: Error) => {
        for (const [, lease] of batch) {
          lease.leasing = false;
          for (const done of lease.waiting.splice(0)) done(error);
        }
      },
    );
  };
  const sweep = (time: number) => {
    sweepAt = time + 10_000;
    for (const [key, lease] of leases) if (time >= lease.expiresAt && !lease.leasing) leases.delete(key);
  };

  return class WindowLeases {
    incr(key: string, done: Counted, windowMs: number, max: number) {
      const time = Date.now();
      if (time >= sweepAt) sweep(time);
      let lease = leases.get(key);
      if (!lease) leases.set(key, lease = { windowMs, max, counted: 0, end: 0, expiresAt: 0, waiting: [], leasing: false });
      lease.waiting.push(done);
      if (!lease.leasing && !serve(lease)) want(key, lease);
    }

    child() {
      return this;
    }
  };
}
