import fastifyCookie from '@fastify/cookie';
import type { Redis } from 'ioredis';
import { serviceUrl } from '@agentyard/config';
import { createAppDb, type AppDb } from '@agentyard/db';
import { createServer, processLog, type ServerOptions, type ServiceApp } from '@agentyard/http';
import { catalog, type RouteSpec, type ServiceName, type Surface } from '@agentyard/proto-schemas';
import type { EdgeConfig } from './config.ts';
import { EdgeErrors } from './errors.ts';
import { admitRequests } from './plugins/admission.ts';
import { AgentKeys } from './plugins/agent-keys.ts';
import { callerContext } from './plugins/caller.ts';
import { isOriginForm } from './plugins/forward.ts';
import { KnownCallers } from './plugins/known-callers.ts';
import { rateLimitRedis } from './plugins/rate-limits.ts';
import { agentRoutes, routingTable } from './plugins/routing.ts';
import serviceRoutes, { readBodiesWhole } from './plugins/service-routes.ts';
import { StreamSlots } from './plugins/stream-slots.ts';
import apiDocs from './routes/api-docs.ts';
import consolePages from './routes/console.ts';
import { backendHealth, startLoadMonitor, webHealth, type HealthLevel } from './routes/health.ts';
import edgeMetrics from './routes/metrics.ts';
import openApi from './routes/openapi.ts';
import queueDashboard from './routes/queue-dashboard.ts';
import unmatchedUrls from './routes/unmatched.ts';

export interface EdgeSurfaceOptions {
  surface: Surface;
  config: EdgeConfig;
  db: AppDb;
  redis: Redis;
  health: { current(): HealthLevel };
  /** The routes to serve (default: the whole catalog) and where each service is; tests put a real echo service behind the edge. */
  routes?: RouteSpec[];
  upstreamOf?: (service: ServiceName) => string;
  /** The long-lived answers the process holds open, shared by its listeners. */
  streams: StreamSlots;
  /** Agents' keys the services accepted lately, shared by the listeners agents reach. */
  agentKeys: AgentKeys;
  /** The agent listener: no `/health` of the edge's own (agents need none; it would tell them the engine's state). */
  agentListener?: boolean;
  /** Callers resolved lately, shared by the listeners. */
  known: KnownCallers;
}

/**
 * One surface of the edge (web or backend) as a plugin: what every request goes through, then the
 * edge's own routes, then every catalogued url forwarded to its service.
 */
async function edgeSurface(app: ServiceApp, options: EdgeSurfaceOptions) {
  const { surface, config } = options;
  const routes = options.routes ?? catalog;
  const table = routingTable(surface, routes);
  const upstreamOf = options.upstreamOf ?? ((service: ServiceName) => serviceUrl(service));
  const callers = callerContext(config, options.db, options.known);

  await admitRequests(app, { ...options, routes, table, upstreamOf, callers }); // on the surface itself: every route has it
  // bull-board reads JSON bodies: it keeps Fastify's parsers, registered before the surface reads bodies whole.
  if (surface === 'web') await app.register(queueDashboard, { config, context: callers }); // /admin/queues
  readBodiesWhole(app, config.BODY_LIMIT_BYTES);

  if (surface === 'web') {
    await app.register(webHealth, { health: options.health }); // /api/health
    await app.register(apiDocs); // /api/docs
    await app.register(consolePages, {}); // GET/HEAD of every other path
  } else if (!options.agentListener) {
    await app.register(backendHealth, { config, upstreamOf }); // /health
    if (!options.routes) await app.register(edgeMetrics, { callers }); // /metrics
  }
  await app.register(openApi, { surface, config, routes }); // /api/openapi.json; backend: /openapi.json
  await app.register(unmatchedUrls, { surface }); // /*, what no route matches
  await app.register(serviceRoutes, { surface, config, table, upstreamOf, agentKeys: options.agentKeys }); // the catalog's urls
}

export function serverOptions(config: EdgeConfig): ServerOptions {
  return {
    name: 'edge',
    logLevel: config.LOG_LEVEL,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY || false,
    parseJson: false,
  };
}

/** What the edge's listeners share and may be handed instead of making their own (tests). */
export interface EdgeDeps {
  db?: AppDb;
  redis?: Redis;
  health?: { current(): HealthLevel };
  routes?: RouteSpec[];
  upstreamOf?: (service: ServiceName) => string;
  logStream?: ServerOptions['logStream'];
}

export interface Edge {
  web: ServiceApp;
  backend: ServiceApp;
  /** The agent listener, when EDGE_AGENT_HOST is set. */
  agents?: ServiceApp;
  listeners: { app: ServiceApp; name: string; address: { host: string; port: number } }[];
  /** The long-lived answers the listeners hold open. */
  streams: StreamSlots;
  /** The callers resolved lately (tests await its notices). */
  known: KnownCallers;
  /** Releases what the listeners share and the edge made itself (after they are closed). */
  release(): Promise<void>;
  close(): Promise<void>;
}

/** The edge's listeners, ready, built as main.ts serves them: web, backend and the optional agent listener. */
export async function buildApp(config: EdgeConfig, deps: EdgeDeps = {}): Promise<Edge> {
  const db = deps.db ?? createAppDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, applicationName: 'edge' });
  const log = processLog('edge', config.LOG_LEVEL, deps.logStream);
  const redis = deps.redis ?? rateLimitRedis(config.REDIS_URL, log);
  const monitor = deps.health ? undefined : startLoadMonitor();
  const health = deps.health ?? monitor!;
  const streams = new StreamSlots(config.EDGE_STREAMS_PER_USER, config.EDGE_STREAMS_MAX);
  const agentKeys = new AgentKeys();
  const known = new KnownCallers({
    databaseUrl: config.DATABASE_URL,
    redisUrl: config.REDIS_URL,
    queuePrefix: config.QUEUE_PREFIX,
    log,
  });
  const listener = async (name: string, surface: Surface, routes = deps.routes, agentListener = false) => {
    // Agents are tenants' code: what they say in X-Forwarded-For is never believed.
    const app = createServer({
      ...serverOptions(config),
      ...(agentListener ? { trustProxy: false } : {}),
      name,
      logStream: deps.logStream,
    });
    // Only paths are served: an absolute-form target (`GET http://host/x`) names a host of the client's choosing.
    app.addHook('onRequest', async (request) => {
      if (!isOriginForm(request.url)) throw EdgeErrors.notOriginForm();
    });
    if (surface === 'web') await app.register(fastifyCookie); // the session cookie, and those a route forwards
    await app.register(edgeSurface, {
      surface,
      config,
      db,
      redis,
      health,
      routes,
      upstreamOf: deps.upstreamOf,
      streams,
      agentKeys,
      agentListener,
      known,
    });
    await app.ready();
    return app;
  };
  const web = await listener('edge-web', 'web');
  const backend = await listener('edge-backend', 'backend');
  const listeners: Edge['listeners'] = [
    { app: web, name: 'web', address: { host: config.EDGE_WEB_HOST, port: config.EDGE_WEB_PORT } },
    { app: backend, name: 'backend', address: { host: config.EDGE_BACKEND_HOST, port: config.EDGE_BACKEND_PORT } },
  ];
  // Agent containers reach the platform here, never through the host's loopback (where PostgreSQL
  // and Redis listen): only the backend routes that authenticate their caller themselves.
  const agents = config.EDGE_AGENT_HOST
    ? await listener('edge-agents', 'backend', agentRoutes(deps.routes), true)
    : undefined;
  if (agents)
    listeners.push({
      app: agents,
      name: 'agent',
      address: { host: config.EDGE_AGENT_HOST, port: config.EDGE_AGENT_PORT },
    });
  if (config.NODE_ENV === 'production' && !config.INTERNAL_API_KEY)
    web.log.warn('INTERNAL_API_KEY is not set: the backend surface answers 500 Server misconfigured');
  const release = async () => {
    monitor?.stop();
    await known.close();
    if (!deps.redis) redis.disconnect();
    if (!deps.db) await db.destroy();
  };
  return {
    web,
    backend,
    agents,
    listeners,
    streams,
    known,
    release,
    async close() {
      await Promise.all(listeners.map(({ app }) => app.close()));
      await release();
    },
  };
}
