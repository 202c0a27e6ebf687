import { metrics, pingRedis, registerDependency } from '@agentyard/observability';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { redisConnection, type RedisErrorLog } from '@agentyard/queue';
import { agentAuthorization, type AgentKeys } from './agent-keys.ts';
import { EdgeErrors } from '../errors.ts';
import {
  namedScopes,
  RATE_LIMIT_SCOPES,
  type RateLimitScope,
  type RouteSpec,
  type Surface,
} from '@agentyard/proto-schemas';

/** Every scope of both surfaces (the table lives in proto-schemas, where route specs name them). */
export const SCOPES: readonly RateLimitScope[] = RATE_LIMIT_SCOPES;

const isUnder = (url: string, prefix: string) => url === prefix || url.startsWith(`${prefix}/`);

/** Applies `name=max` overrides (RATE_LIMITS) to the scopes of one surface. */
export function scopesFor(surface: Surface, overrides: string): RateLimitScope[] {
  const maxByName = new Map(
    overrides
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)
      .map((entry) => {
        const [name, value] = entry.split('=');
        const max = Number(value);
        if (!name || !SCOPES.some((s) => s.name === name) || !Number.isInteger(max) || max < 1)
          throw new Error(`RATE_LIMITS: bad entry ${entry}`);
        return [name, max] as const;
      }),
  );
  return SCOPES.filter((s) => s.surface === surface).map((s) => ({ ...s, max: maxByName.get(s.name) ?? s.max }));
}

/**
 * An unmatched URL's path as surface-wide scopes judge it: before `?` or `#`, percent-decoded, in
 * lower case and with runs of slashes as one, so `//API/x` or `/%61pi/x` counts like `/api/x`.
 */
function unmatchedPath(rawUrl: string): string {
  const end = rawUrl.search(/[?#]/);
  let path = end === -1 ? rawUrl : rawUrl.slice(0, end);
  try {
    path = decodeURIComponent(path);
  } catch {
    // counted as sent
  }
  return path.toLowerCase().replace(/\/{2,}/g, '/');
}

/**
 * Which scopes count a request on one surface, by the route the router matched (its url pattern
 * and the method), never by the raw URL: the surface-wide scopes over that pattern plus those its
 * spec names. A method no spec of the url declares (the edge forwards every method) counts against
 * every scope of the url; HEAD counts as GET. An unmatched url (no route, or the edge's catch-all)
 * counts against the surface-wide scopes over its path. Lists keep the table's order (most general first).
 */
export function routeScopes<S extends RateLimitScope>(
  surface: Surface,
  routes: readonly RouteSpec[],
  scopes: readonly S[],
) {
  const surfaceWide = scopes.filter((scope) => scope.everyUrlUnder !== undefined);
  const ofPattern = (url: string, named: ReadonlySet<string>) =>
    scopes.filter(
      (scope) => (scope.everyUrlUnder !== undefined && isUnder(url, scope.everyUrlUnder)) || named.has(scope.name),
    );
  const namesByUrl = new Map<string, Map<string, Set<string>>>();
  for (const spec of routes) {
    if (!spec.surfaces.includes(surface)) continue;
    const byMethod = namesByUrl.get(spec.url) ?? new Map<string, Set<string>>();
    namesByUrl.set(spec.url, byMethod);
    for (const method of [spec.method].flat()) {
      const names = byMethod.get(method) ?? new Set<string>();
      for (const name of namedScopes(spec)) names.add(name);
      byMethod.set(method, names);
    }
  }
  const byUrl = new Map<string, { byMethod: Map<string, S[]>; otherMethods: S[] }>();
  for (const [url, byMethod] of namesByUrl) {
    byUrl.set(url, {
      byMethod: new Map([...byMethod].map(([method, names]) => [method, ofPattern(url, names)])),
      otherMethods: ofPattern(url, new Set([...byMethod.values()].flatMap((names) => [...names]))),
    });
  }
  const none: ReadonlySet<string> = new Set();
  return function scopesOf(method: string, routeUrl: string | undefined, rawUrl: string): readonly S[] {
    if (routeUrl === undefined) {
      const path = unmatchedPath(rawUrl);
      return surfaceWide.filter((scope) => isUnder(path, scope.everyUrlUnder!));
    }
    let url = byUrl.get(routeUrl);
    // The edge's own routes (and any pattern not in the catalog): the surface-wide scopes over it.
    if (!url) byUrl.set(routeUrl, (url = { byMethod: new Map(), otherMethods: ofPattern(routeUrl, none) }));
    return url.byMethod.get(method === 'HEAD' ? 'GET' : method) ?? url.otherMethods;
  };
}

/** The signed-in user of a request whose caller is resolved, for the scopes counted per user. */
const signedInUsers = new WeakMap<FastifyRequest, string>();

/**
 * Who a scope's counter belongs to: the client address; for an agent scope the SHA-256 of the
 * caller's bearer key (never the key) once the service has accepted it (an unknown key counts
 * against the address, so inventing keys buys no fresh counters); for a user scope the signed-in
 * user (a caller who is not, by address).
 */
function counterKey(scope: RateLimitScope, agentKeys: AgentKeys): (request: FastifyRequest) => string {
  if (scope.per === 'client-ip') return (request) => `${scope.name}:${request.ip}`;
  if (scope.per === 'user')
    return (request) => {
      const userId = signedInUsers.get(request);
      return userId ? `${scope.name}:user:${userId}` : `${scope.name}:${request.ip}`;
    };
  return (request) => {
    const known = agentKeys.knownHash(agentAuthorization(request.headers));
    return known ? `${scope.name}:agent:${known}` : `${scope.name}:${request.ip}`;
  };
}

type Check = (
  request: FastifyRequest,
) => Promise<{ isAllowed: boolean; isExceeded?: boolean; max?: number; remaining?: number; ttlInSeconds?: number }>;

/**
 * One check per scope of the surface (built once); returns the two hooks that count a request
 * against its route's scopes: `byClient` before the caller is resolved (scopes per address or
 * agent key, so a flood costs no session lookup), `byUser` once it is (scopes per signed-in user).
 */
export function rateLimiter(
  app: FastifyInstance & { createRateLimit(options: object): Check },
  surface: Surface,
  routes: readonly RouteSpec[],
  overrides: string,
  agentKeys: AgentKeys,
) {
  const scopes = scopesFor(surface, overrides).map((scope) => ({
    ...scope,
    check: app.createRateLimit({
      max: scope.max,
      timeWindow: scope.windowMs,
      keyGenerator: counterKey(scope, agentKeys),
    }),
  }));
  const scopesOf = routeScopes(surface, routes, scopes);
  const matchingOf = (request: FastifyRequest) => {
    const route = request.routeOptions;
    return scopesOf(request.method, route.config?.unmatched ? undefined : route.url, request.url);
  };
  const count = async (
    request: FastifyRequest,
    reply: FastifyReply,
    matching: readonly (typeof scopes)[number][],
  ): Promise<void> => {
    if (matching.length === 0) return;
    // Every scope counts the request at once (from this process's leases, or with one script call to
    // Redis: windowLeases below); the answers are then read most general first.
    const results = await Promise.all(matching.map((scope) => scope.check(request)));
    for (const [index, scope] of matching.entries()) {
      const result = results[index]!;
      if (result.isAllowed) continue;
      // The headers describe the scope nearest its limit (of equals, the most specific): the one to pace by.
      const shown = reply.getHeader('RateLimit-Remaining');
      if (result.isExceeded || shown === undefined || Number(result.remaining) <= Number(shown)) {
        reply.header('RateLimit-Limit', result.max);
        reply.header('RateLimit-Remaining', result.remaining);
        reply.header('RateLimit-Reset', result.ttlInSeconds);
      }
      if (result.isExceeded) {
        reply.header('Retry-After', result.ttlInSeconds);
        metrics.rateLimitRefusals().inc({ scope: scope.name });
        throw EdgeErrors.rateLimited(scope.message);
      }
    }
  };
  return {
    byClient: (request: FastifyRequest, reply: FastifyReply) =>
      count(
        request,
        reply,
        matchingOf(request).filter((scope) => scope.per !== 'user'),
      ),
    byUser: (request: FastifyRequest, reply: FastifyReply, userId: string | null | undefined) => {
      const matching = matchingOf(request).filter((scope) => scope.per === 'user');
      if (matching.length > 0 && userId) signedInUsers.set(request, userId);
      return count(request, reply, matching);
    },
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
 * let through uncounted (skipOnError), instead of waiting without end; its errors are warnings.
 */
export function rateLimitRedis(url: string, log?: RedisErrorLog['log']): Redis {
  const redis = redisConnection(
    url,
    { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000 },
    { purpose: 'rate-limit', log, level: 'warn' },
  );
  redis.once(
    'end',
    registerDependency('redis', (signal) => pingRedis(redis, signal)),
  );
  return redis;
}

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
    while (
      lease.waiting.length > 0 &&
      time < lease.expiresAt &&
      (lease.counted < lease.end || lease.end >= lease.max)
    ) {
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
    leasing
      .agentyardLeaseWindows(
        batch.length,
        ...batch.map(([key]) => prefix + key),
        ...batch.flatMap(([, lease]) => [lease.windowMs, lease.max, lease.waiting.length]),
      )
      .then(
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
      if (!lease)
        leases.set(key, (lease = { windowMs, max, counted: 0, end: 0, expiresAt: 0, waiting: [], leasing: false }));
      lease.waiting.push(done);
      if (!lease.leasing && !serve(lease)) want(key, lease);
    }

    child() {
      return this;
    }
  };
}
