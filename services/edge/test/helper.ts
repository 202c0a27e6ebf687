import { once } from 'node:events';
import type { Test } from 'tap';
import { createServer, identityPlugin, type ServiceApp } from '@agentyard/http';
import { accountRoutes, aiRoutes, route, type RouteSpec, type Surface } from '@agentyard/proto-schemas';
import { appDb } from '@agentyard/testing';
import { buildApp, type Edge } from '../src/app.ts';
import type { KnownCallers } from '../src/plugins/known-callers.ts';
import { loadEdgeConfig } from '../src/config.ts';
import { rateLimitRedis } from '../src/plugins/rate-limits.ts';

/**
 * A real service behind the edge that checks the signed identity like every service does and
 * answers with what it received, so tests see exactly what the edge forwards.
 */
export async function startEchoService(t: Test, options: { everyPath?: boolean } = {}): Promise<string> {
  const app = createServer({ name: 'echo', logLevel: 'silent' });
  await app.register(identityPlugin, { secret: process.env.IDENTITY_SECRET! });
  const echo = async (request: { identity: unknown; headers: Record<string, unknown>; body?: unknown }) => ({
    identity: request.identity,
    headers: request.headers,
    body: request.body ?? null,
  });
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/echo', config: { auth: 'none' }, handler: echo });
  app.route({ method: ['GET', 'POST'], url: '/keyless', config: { auth: 'none' }, handler: echo });
  app.route({ method: ['GET', 'POST'], url: '/api/register', config: { auth: 'none' }, handler: echo });
  app.route({ method: ['GET', 'POST'], url: '/api/ai/models', config: { auth: 'service' }, handler: echo });
  app.route({ method: ['GET'], url: '/bearer', config: { auth: 'none' }, handler: echo });
  // Behind an edge serving the whole catalog: every path answers, so what the edge matched shows.
  if (options.everyPath)
    app.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url: '/*',
      config: { auth: 'none' },
      handler: echo,
    });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const { port } = app.server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

const both = ['web', 'backend'] as const;
/** The routes the edge serves in these tests, all owned by the echo service. */
export const echoRoutes: RouteSpec[] = [
  route({
    method: ['GET', 'POST', 'DELETE'],
    url: '/echo',
    service: 'auth',
    surfaces: [...both],
    auth: 'none',
    summary: 'echo',
    schema: { response: {} },
  }),
  route({
    method: ['GET', 'POST'],
    url: '/keyless',
    service: 'auth',
    surfaces: ['backend'],
    auth: 'none',
    backendKey: false,
    summary: 'echo',
    schema: { response: {} },
  }),
  route({
    method: ['GET', 'POST'],
    url: '/api/register',
    service: 'auth',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: accountRoutes.register.rateLimit,
    summary: 'echo',
    schema: { response: {} },
  }),
  route({
    method: ['GET', 'POST'],
    url: '/api/ai/models',
    service: 'auth',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: aiRoutes.models.rateLimit,
    summary: 'echo',
    schema: { response: {} },
  }),
  route({
    method: 'GET',
    url: '/bearer',
    service: 'auth',
    surfaces: ['backend'],
    auth: 'none',
    backendKey: false,
    forwardAuthorization: true,
    summary: 'echo',
    schema: { response: {} },
  }),
];

/** One edge surface (built with the others, as main.ts builds them) in front of `upstream`, configured from this run's environment plus `env`. */
export async function buildEdge(
  t: Test,
  surface: Surface,
  upstream: string,
  env: Record<string, string> = {},
  routes = echoRoutes,
): Promise<ServiceApp> {
  return (await buildWholeEdge(t, upstream, env, routes))[surface];
}

/** The edge's listeners and what they share (its known callers), as buildEdge builds them. */
export async function buildWholeEdge(
  t: Test,
  upstream: string,
  env: Record<string, string> = {},
  routes = echoRoutes,
): Promise<Edge> {
  const config = loadEdgeConfig({ ...process.env, ...env });
  const redis = rateLimitRedis(config.REDIS_URL);
  if (redis.status !== 'ready') await once(redis, 'ready'); // without an offline queue, a request before it would go uncounted
  const edge = await buildApp(config, {
    db: appDb(),
    redis,
    health: { current: () => 'healthy' },
    routes,
    upstreamOf: () => upstream,
  });
  t.teardown(async () => {
    await edge.close();
    redis.disconnect();
  });
  return edge;
}

/** Resolves once the edge answers callers from memory (its identity feeds are live). */
export async function answeringFromMemory(known: KnownCallers): Promise<void> {
  if (!known.cached) await once(known.events, 'listening');
}

/** Runs a change made in the database directly (no service announced it) and resolves once the edge applied its notice. */
export async function changedInDatabase(
  known: KnownCallers,
  change: () => Promise<unknown>,
  payload: string,
): Promise<void> {
  const applied = new Promise<void>((resolve) => {
    const onNotice = (seen: string) => {
      if (seen !== payload) return;
      known.events.off('notice', onNotice);
      resolve();
    };
    known.events.on('notice', onNotice);
  });
  await change();
  await applied;
}
