import httpProxy from '@fastify/http-proxy';
import rateLimit from '@fastify/rate-limit';
import { parseCookie, stringifyCookie } from 'cookie';
import type { Redis } from 'ioredis';
import { adminEmailSet, serviceUrl } from '@agentyard/config';
import type { AppDb } from '@agentyard/db';
import { HttpError, type ServiceApp } from '@agentyard/http';
import { IDENTITY_HEADER, signIdentity, type Surface } from '@agentyard/identity';
import { BackendHealth, catalog, WebHealth, type RouteSpec, type ServiceName } from '@agentyard/proto-schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { resolveBackendCaller, resolveWebCaller, type CallerContext } from './caller.ts';
import type { EdgeConfig } from './config.ts';
import { checkCsrf, trustedOriginSet } from './csrf.ts';
import { pingContainerEngine, type HealthLevel } from './health.ts';
import { openApiDocument } from './openapi.ts';
import { rateLimiter, scopesFor, windowLeases } from './rate-limits.ts';
import { routingTable, type ServiceRoutes } from './routing.ts';

declare module 'fastify' {
  interface FastifyRequest {
    identityHeader: string;
  }
  interface FastifyContextConfig {
    /** Answered by the edge itself: no caller resolution, nothing forwarded. */
    edgeLocal?: boolean;
  }
}

export interface EdgeSurfaceOptions {
  surface: Surface;
  config: EdgeConfig;
  db: AppDb;
  redis: Redis;
  health: { current(): HealthLevel };
  /** The routes to serve (default: the whole catalog) and where each service is; tests put a real echo service behind the edge. */
  routes?: RouteSpec[];
  upstreamOf?: (service: ServiceName) => string;
}

/** The named cookies of a Cookie header, re-serialized; undefined when none of them is there. */
function onlyCookies(header: unknown, names: ReadonlySet<string> | undefined): string | undefined {
  if (!names || typeof header !== 'string') return undefined;
  const kept = Object.entries(parseCookie(header)).filter(([name, value]) => names.has(name) && value !== undefined);
  return kept.length ? stringifyCookie(Object.fromEntries(kept)) : undefined;
}

/** Request headers a service never receives from outside: the edge alone speaks for the caller. */
function forwardedHeaders(request: FastifyRequest, headers: Record<string, unknown>, surface: Surface, routes: ServiceRoutes) {
  const out: Record<string, unknown> = {};
  const url = request.routeOptions.url ?? '';
  const keepAuthorization = routes.bearerForwarded.has(url);
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'cookie' || name === IDENTITY_HEADER || (name === 'authorization' && !keepAuthorization)) continue;
    if (surface === 'web' && name.startsWith('x-user-')) continue;
    out[name] = value;
  }
  const cookie = onlyCookies(headers.cookie, routes.cookiesForwarded.get(url));
  if (cookie) out.cookie = cookie;
  out[IDENTITY_HEADER] = request.identityHeader;
  out['x-request-id'] = request.id;
  out['x-forwarded-for'] = request.ip;
  out['x-forwarded-proto'] = request.protocol;
  return out;
}

/** One surface of the edge (web or backend) as a plugin. */
export default async function edgeSurface(app: ServiceApp, options: EdgeSurfaceOptions) {
  const { surface, config, db, redis } = options;
  const context: CallerContext = { db, admins: adminEmailSet(config.ADMIN_EMAILS), internalApiKey: config.INTERNAL_API_KEY };
  const trustedOrigins = trustedOriginSet(config.PUBLIC_BASE_URL, config.CSRF_TRUSTED_ORIGINS);
  const table = routingTable(surface, options.routes ?? catalog);
  const upstreamOf = options.upstreamOf ?? ((service: ServiceName) => serviceUrl(service));
  const keyless = new Set(table.flatMap((entry) => [...entry.keyless]));

  await app.register(rateLimit, { global: false, store: windowLeases(redis, `${config.QUEUE_PREFIX}:ratelimit:`), skipOnError: true });
  const countRequest = rateLimiter(app as never, scopesFor(surface, config.RATE_LIMITS));

  app.decorateRequest('identityHeader', '');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (Number(request.headers['content-length'] ?? 0) > config.BODY_LIMIT_BYTES) throw new HttpError(413, 'Request body too large');
    await countRequest(request, reply);
    const route = request.routeOptions;
    if (route.config?.edgeLocal || !route.url) return;
    const identity = surface === 'web'
      ? await resolveWebCaller(request, context)
      : resolveBackendCaller(request, context, !keyless.has(route.url));
    if (surface === 'web') checkCsrf(request, identity, trustedOrigins);
    request.identityHeader = signIdentity(identity, config.IDENTITY_SECRET, config.IDENTITY_TTL_SECONDS);
  });

  if (surface === 'web') {
    app.get('/api/health', { config: { edgeLocal: true }, schema: { response: { 200: WebHealth } } }, async () =>
      ({ status: 'ok' as const, health: options.health.current(), timestamp: new Date().toISOString() }));
  } else {
    app.get('/health', { config: { edgeLocal: true }, schema: { response: { 200: BackendHealth } } }, async () => ({
      status: 'ok' as const,
      timestamp: new Date().toISOString(),
      docker: (await pingContainerEngine(config.DOCKER_HOST)) ? 'available' as const : 'unavailable' as const,
      provisioning: config.PROVISIONING_ENABLED ? 'enabled' as const : 'disabled' as const,
      provider: config.RUNTIME_DRIVER,
    }));
  }
  const docsPath = surface === 'web' ? '/api/openapi.json' : '/openapi.json';
  const docs = openApiDocument(surface, surface === 'web' ? config.PUBLIC_BASE_URL : `http://${config.EDGE_BACKEND_HOST}:${config.EDGE_BACKEND_PORT}`, options.routes ?? catalog);
  app.get(docsPath, { config: { edgeLocal: true } }, async () => docs);

  // Bodies (at most BODY_LIMIT_BYTES, enforced by Fastify here even when chunked) are read whole and
  // forwarded as one Buffer rather than piped: on undici's stream-body path every request's objects
  // outlived two young-generation GCs, were promoted, and made the edge's scavenges long (p99) and
  // its old space grow until mark-compact (RSS). Bodies stay bytes: nothing is parsed or re-encoded.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: config.BODY_LIMIT_BYTES }, (_request: FastifyRequest, body: Buffer, done: (error: null, body: Buffer) => void) => done(null, body));
  const forwardBody = (request: FastifyRequest, reply: FastifyReply, dest: string, options: object) =>
    reply.from(dest, request.body === undefined ? options : { ...options, body: request.body, contentType: request.headers['content-type'] ?? 'application/octet-stream' });

  for (const entry of table) {
    await app.register(httpProxy, {
      upstream: upstreamOf(entry.service),
      prefix: '',
      routes: entry.urls,
      websocket: entry.websocket,
      proxyPayloads: false,
      handler: forwardBody,
      undici: { connections: 256, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 300_000 },
      replyOptions: {
        rewriteRequestHeaders: (request: FastifyRequest, headers: Record<string, unknown>) => forwardedHeaders(request, headers, surface, entry),
        onError: (reply: FastifyReply) => { reply.code(502).send({ error: 'Backend unavailable' }); },
      },
      wsClientOptions: {
        rewriteRequestHeaders: (headers: Record<string, unknown>, request: FastifyRequest) => forwardedHeaders(request, headers, surface, entry),
      },
    } as never);
  }
}
