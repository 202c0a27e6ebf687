import type { IncomingMessage } from 'node:http';
import httpProxy from '@fastify/http-proxy';
import rateLimit from '@fastify/rate-limit';
import fastifyCookie from '@fastify/cookie';
import type { Redis } from 'ioredis';
import { adminEmailSet, adminNeedsVerifiedEmail, serviceUrl } from '@agentyard/config';
import { createAppDb, type AppDb } from '@agentyard/db';
import { createServer, processLog, type ServerOptions, type ServiceApp } from '@agentyard/http';
import { signIdentity } from '@agentyard/identity';
import {
  BackendHealth,
  catalog,
  WebHealth,
  type Method,
  type RouteSpec,
  type ServiceName,
  type Surface,
} from '@agentyard/proto-schemas';
import { dependencyStates, registry } from '@agentyard/observability';
import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { resolveBackendCaller, resolveWebCaller, serviceCaller, type CallerContext } from './plugins/caller.ts';
import { KnownCallers } from './plugins/known-callers.ts';
import apiDocs from './routes/api-docs.ts';
import type { EdgeConfig } from './config.ts';
import consolePages from './routes/console.ts';
import { EdgeErrors } from './errors.ts';
import { checkCsrf, trustedOriginSet } from './plugins/csrf.ts';
import { agentAuthorization, AgentKeys } from './plugins/agent-keys.ts';
import { BACKEND_UNAVAILABLE, isOriginForm, POOL_OPTIONS, upstream } from './plugins/forward.ts';
import { forwardedHeaders } from './plugins/forwarded-headers.ts';
import { runtimeReachability, startLoadMonitor, type HealthLevel } from './routes/health.ts';
import { openApiDocument } from './routes/openapi.ts';
import queueDashboard from './routes/queue-dashboard.ts';
import { rateLimiter, rateLimitRedis, windowLeases } from './plugins/rate-limits.ts';
import { agentRoutes, routingTable } from './plugins/routing.ts';
import { StreamSlots } from './plugins/stream-slots.ts';
import { checkUpgrade, isWebSocketUpgrade } from './plugins/upgrade-check.ts';

declare module 'fastify' {
  interface FastifyRequest {
    identityHeader: string;
  }
  interface FastifyContextConfig {
    /** Answered by the edge itself: no caller resolution, nothing forwarded. */
    edgeLocal?: boolean;
    /** The edge's answer to a url no route matches (404), which still counts against surface-wide limits. */
    unmatched?: boolean;
    /** The route's body is relayed as it arrives, up to `maxBytes` (its spec's `streamedBody`) instead of BODY_LIMIT_BYTES. */
    streamedBody?: { maxBytes: number };
  }
}

/** Relays a request to its service (forward.ts), its body streamed up to `maxBytes` on a streamed route. */
type ForwardHandler = (request: FastifyRequest, reply: FastifyReply, streamedBody?: { maxBytes: number }) => void;

/** How long a service may take to answer the check of a WebSocket upgrade (upgrade-check.ts). */
const UPGRADE_CHECK_TIMEOUT_MS = 15_000;

/** The methods forwarded on every catalogued url: the service answers for those it does not take. */
const FORWARDED_METHODS: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

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

/** One surface of the edge (web or backend) as a plugin. */
async function edgeSurface(app: ServiceApp, options: EdgeSurfaceOptions) {
  const { surface, config, db, redis, streams, agentKeys } = options;
  const context: CallerContext = {
    db,
    admins: adminEmailSet(config.ADMIN_EMAILS),
    adminNeedsVerifiedEmail: adminNeedsVerifiedEmail(config.NODE_ENV),
    internalApiKey: config.INTERNAL_API_KEY,
    known: options.known,
  };
  const trustedOrigins = trustedOriginSet(config.PUBLIC_BASE_URL, config.CSRF_TRUSTED_ORIGINS);
  const table = routingTable(surface, options.routes ?? catalog);
  const upstreamOf = options.upstreamOf ?? ((service: ServiceName) => serviceUrl(service));
  const keyless = new Set(table.flatMap((entry) => [...entry.keyless]));
  // Web urls taking WebSocket upgrades, and their service: each upgrade is checked with it first.
  const upgradeChecked = new Map(
    surface === 'web'
      ? table.flatMap((entry) => [...entry.websocket].map((url) => [url, upstreamOf(entry.service)] as const))
      : [],
  );
  const websocketUrls = new Set(table.flatMap((entry) => [...entry.websocket]));
  const longLived = new Map(table.flatMap((entry) => [...entry.longLived]));
  const poolLimits = {
    connections: config.EDGE_SERVICE_CONNECTIONS,
    streamConnections: config.EDGE_STREAMS_MAX,
    queueTimeoutMs: config.EDGE_QUEUE_TIMEOUT_MS,
  };

  await app.register(rateLimit, {
    global: false,
    store: windowLeases(redis, `${config.QUEUE_PREFIX}:ratelimit:`),
    skipOnError: true,
  });
  const limits = rateLimiter(app as never, surface, options.routes ?? catalog, config.RATE_LIMITS, agentKeys);

  app.decorateRequest('identityHeader', '');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // A streamed body is held to its own ceiling by the relay (forward.ts), declared or not.
    if (
      !request.routeOptions.config?.streamedBody &&
      Number(request.headers['content-length'] ?? 0) > config.BODY_LIMIT_BYTES
    )
      throw EdgeErrors.bodyTooLarge();
    await limits.byClient(request, reply);
    const route = request.routeOptions;
    if (route.config?.edgeLocal || !route.url) return;
    const identity =
      surface === 'web'
        ? await resolveWebCaller(request, context)
        : resolveBackendCaller(request, context, !keyless.has(route.url));
    if (surface === 'web') checkCsrf(request, identity, trustedOrigins);
    await limits.byUser(request, reply, identity.userId);
    request.identityHeader = signIdentity(identity, config.IDENTITY_SECRET, config.IDENTITY_TTL_SECONDS);
    const upgrade = websocketUrls.has(route.url) && isWebSocketUpgrade(request);
    const checkedBy = upgradeChecked.get(route.url);
    if (checkedBy && upgrade && !(await checkUpgrade(request, reply, checkedBy, UPGRADE_CHECK_TIMEOUT_MS)))
      return reply;
    // Answers that stay open take a slot of the caller's and the process's (429 when none is left).
    if (upgrade || longLived.get(route.url)?.has(request.method)) streams.hold(request, reply, identity, upgrade);
  });

  if (surface === 'web') {
    await app.register(queueDashboard, { config, context });
    app.get('/api/health', { config: { edgeLocal: true }, schema: { response: { 200: WebHealth } } }, async () => ({
      status: 'ok' as const,
      health: options.health.current(),
      timestamp: new Date().toISOString(),
    }));
  } else if (!options.agentListener) {
    app.get(
      '/health',
      { config: { edgeLocal: true }, schema: { response: { 200: BackendHealth } } },
      async (request) => {
        // The agents service holds the runtime (docker or a cluster): it says whether its engine answers.
        const asService = signIdentity(serviceCaller(request.id), config.IDENTITY_SECRET, config.IDENTITY_TTL_SECONDS);
        const [runtime, dependencies] = await Promise.all([
          runtimeReachability(upstreamOf('agents'), asService),
          dependencyStates(),
        ]);
        return {
          status: 'ok' as const,
          timestamp: new Date().toISOString(),
          docker: runtime.reachable ? ('available' as const) : ('unavailable' as const),
          provisioning: config.PROVISIONING_ENABLED ? ('enabled' as const) : ('disabled' as const),
          provider: runtime.driver ?? config.RUNTIME_DRIVER,
          dependencies,
        };
      },
    );
    // The edge's own Prometheus metrics for a key holder (scrapers normally use the operations listener).
    if (!options.routes)
      app.get('/metrics', { config: { edgeLocal: true } }, async (request, reply) => {
        resolveBackendCaller(request, context, true);
        return reply.type(registry.contentType).send(await registry.metrics());
      });
  }
  // Unmatched urls land here rather than on the server's 404 handler, so this surface's hooks (limits,
  // body size, request id) see them too.
  // On the web surface GET/HEAD of an unmatched url are the console's (console.ts), /api/docs Swagger UI.
  if (surface === 'web') await Promise.all([app.register(consolePages, {}), app.register(apiDocs)]);
  app.route({
    method: surface === 'web' ? FORWARDED_METHODS.filter((m) => m !== 'GET' && m !== 'HEAD') : FORWARDED_METHODS,
    url: '/*',
    config: { edgeLocal: true, unmatched: true },
    handler: async () => {
      throw EdgeErrors.notFound();
    },
  });
  const docsPath = surface === 'web' ? '/api/openapi.json' : '/openapi.json';
  const docs = openApiDocument(
    surface,
    surface === 'web' ? config.PUBLIC_BASE_URL : `http://${config.EDGE_BACKEND_HOST}:${config.EDGE_BACKEND_PORT}`,
    options.routes ?? catalog,
  );
  app.get(docsPath, { config: { edgeLocal: true } }, async () => docs);

  // Bodies (at most BODY_LIMIT_BYTES, enforced by Fastify here even when chunked) are read whole and
  // forwarded as one Buffer rather than piped: on undici's stream-body path every request's objects
  // outlived two young-generation GCs, were promoted, and made the edge's scavenges long (p99) and
  // its old space grow until mark-compact (RSS). Bodies stay bytes: nothing is parsed or re-encoded.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: config.BODY_LIMIT_BYTES },
    (_request: FastifyRequest, body: Buffer, done: (error: null, body: Buffer) => void) => done(null, body),
  );

  // Every route is forwarded by the edge's own relay (forward.ts): @fastify/reply-from cost about a
  // third more CPU per request for the same work. Urls that take WebSocket upgrades stay on
  // @fastify/http-proxy, which carries the upgrade and plain requests alike.
  // A route whose spec streams its body (uploads) gets the raw request stream instead, in a context
  // of its own registered here, after the hooks above, so that it inherits every one of them.
  const streamedRoutes: { url: string; methods: Method[]; maxBytes: number; forward: ForwardHandler }[] = [];
  for (const entry of table) {
    const origin = upstreamOf(entry.service);
    const service = upstream(origin, poolLimits);
    app.addHook('onClose', () => service.close());
    const handler: ForwardHandler = (request, reply, streamedBody) => {
      const url = request.routeOptions.url ?? '';
      // What the service answers an agent's own key teaches the agent-key rate limits whose key it is.
      const bearer = entry.bearerForwarded.has(url) ? agentAuthorization(request.headers) : undefined;
      service.forward(request, reply, forwardedHeaders(request, request.headers, surface, entry), {
        streamedBody,
        longLived: entry.longLived.get(url)?.has(request.method),
        onStatus: bearer ? (status) => agentKeys.learn(bearer, status) : undefined,
      });
    };
    for (const url of entry.urls) {
      if (entry.websocket.has(url)) continue;
      const streamed = entry.streamed.get(url);
      if (streamed) streamedRoutes.push({ url, ...streamed, forward: handler });
      const method = FORWARDED_METHODS.filter((m) => !streamed?.methods.includes(m as Method));
      if (method.length) app.route({ method, url, handler: (request, reply) => handler(request, reply) });
    }
    if (!entry.websocket.size) continue;
    await app.register(httpProxy, {
      upstream: origin,
      prefix: '',
      routes: [...entry.websocket],
      websocket: true,
      proxyPayloads: false,
      handler: (request: FastifyRequest, reply: FastifyReply, dest: string, options: object) =>
        reply.from(
          dest,
          request.body === undefined
            ? options
            : {
                ...options,
                body: request.body,
                contentType: request.headers['content-type'] ?? 'application/octet-stream',
              },
        ),
      undici: { ...POOL_OPTIONS, connections: config.EDGE_SERVICE_CONNECTIONS },
      replyOptions: {
        rewriteRequestHeaders: (request: FastifyRequest, headers: Record<string, unknown>) =>
          forwardedHeaders(request, headers, surface, entry),
        onError: (reply: FastifyReply) => {
          reply.code(502).send(BACKEND_UNAVAILABLE);
        },
      },
      wsClientOptions: {
        rewriteRequestHeaders: (headers: Record<string, unknown>, request: FastifyRequest) =>
          forwardedHeaders(request, headers, surface, entry),
      },
    } as never);
  }
  if (streamedRoutes.length) await app.register(streamedBodyRoutes, { routes: streamedRoutes });
}

/** Streamed bodies are passed on as they arrive: the parser hands over the request stream itself. */
async function streamedBodyRoutes(
  app: ServiceApp,
  { routes }: { routes: { url: string; methods: Method[]; maxBytes: number; forward: ForwardHandler }[] },
) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    (_request: FastifyRequest, payload: IncomingMessage, done: (error: null, body: IncomingMessage) => void) =>
      done(null, payload),
  );
  for (const { url, methods, maxBytes, forward } of routes) {
    const streamedBody = { maxBytes };
    app.route({
      method: methods,
      url,
      config: { streamedBody },
      handler: (request, reply) => forward(request, reply, streamedBody),
    });
  }
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
