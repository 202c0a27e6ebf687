import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
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
    // Every scope counts the request at once (one script call to Redis: windowCounter below); the
    // answers are then read most general first.
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

// INCR each key; a new window (or a key left without one) expires after its window. Answers
// [count, ttl ms] per key, in order — what @fastify/rate-limit's own Redis store answers for one key.
const COUNT_SCRIPT = `
local answers = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[i])
  local current = redis.call('INCR', key)
  local ttl = window
  if current > 1 then ttl = redis.call('PTTL', key) end
  if current == 1 or ttl < 0 then
    redis.call('PEXPIRE', key, window)
    ttl = window
  end
  answers[#answers + 1] = current
  answers[#answers + 1] = ttl
end
return answers`;

type Counted = (error: Error | null, result?: { current: number; ttl: number }) => void;
type CountingRedis = Redis & { agentyardCountWindows(...args: (string | number)[]): Promise<number[]> };

/**
 * A @fastify/rate-limit store on Redis that counts the keys asked for in the same tick (the scopes of
 * one request, or of several) with one script call: one command and one write, where the plugin's
 * own store sends a command per scope, and ioredis auto-pipelining (which merges them too) allocated
 * a pipeline per tick whose objects outlived the edge's young-generation GCs and lengthened them.
 */
export function windowCounter(redis: Redis, prefix: string) {
  const counting = redis as CountingRedis;
  if (!counting.agentyardCountWindows) redis.defineCommand('agentyardCountWindows', { lua: COUNT_SCRIPT });
  let pending: { key: string; windowMs: number; done: Counted }[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    counting.agentyardCountWindows(batch.length, ...batch.map((b) => prefix + b.key), ...batch.map((b) => b.windowMs)).then(
      (answers) => { for (const [i, b] of batch.entries()) b.done(null, { current: answers[2 * i]!, ttl: answers[2 * i + 1]! }); },
      (error: Error) => { for (const b of batch) b.done(error); },
    );
  };
  return class WindowCounter {
    incr(key: string, done: Counted, windowMs: number) {
      if (pending.push({ key, windowMs, done }) === 1) process.nextTick(flush);
    }

    child() {
      return this;
    }
  };
}
