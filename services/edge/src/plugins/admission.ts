import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { ServiceApp } from '@agentyard/http';
import { signIdentity, type Identity } from '@agentyard/identity';
import type { RouteSpec, ServiceName, Surface } from '@agentyard/proto-schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EdgeConfig } from '../config.ts';
import { EdgeErrors } from '../errors.ts';
import type { AgentKeys } from './agent-keys.ts';
import { resolveBackendCaller, resolveWebCaller, type CallerContext } from './caller.ts';
import { checkCsrf, trustedOriginSet } from './csrf.ts';
import { rateLimiter, windowLeases } from './rate-limits.ts';
import type { ServiceRoutes } from './routing.ts';
import type { StreamSlots } from './stream-slots.ts';
import { checkUpgrade, isWebSocketUpgrade } from './upgrade-check.ts';

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

/** How long a service may take to answer the check of a WebSocket upgrade (upgrade-check.ts). */
const UPGRADE_CHECK_TIMEOUT_MS = 15_000;

export interface AdmissionOptions {
  surface: Surface;
  config: EdgeConfig;
  redis: Redis;
  routes: RouteSpec[];
  /** The surface's urls by service (routing.ts), and where each service is. */
  table: ServiceRoutes[];
  upstreamOf: (service: ServiceName) => string;
  callers: CallerContext;
  streams: StreamSlots;
  agentKeys: AgentKeys;
}

/**
 * What every request of a surface goes through before its route, in this order: its request id
 * answered, its declared body size, the limits of its client, then (unless the edge answers it
 * itself) its caller resolved (and on the web held to CSRF), the limits of its user, the signed
 * identity header, and for an answer that stays open its upgrade check and a stream slot.
 * Added to the surface itself, before its routes, so that every route has it.
 */
export async function admitRequests(app: ServiceApp, options: AdmissionOptions) {
  const { surface, config } = options;
  await app.register(rateLimit, {
    global: false,
    store: windowLeases(options.redis, `${config.QUEUE_PREFIX}:ratelimit:`),
    skipOnError: true,
  });
  const limits = rateLimiter(app as never, surface, options.routes, config.RATE_LIMITS, options.agentKeys);
  const callerOf = callerResolution(options);
  const holdOpen = openAnswers(options);

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
    const identity = await callerOf(request, route.url);
    await limits.byUser(request, reply, identity.userId);
    request.identityHeader = signIdentity(identity, config.IDENTITY_SECRET, config.IDENTITY_TTL_SECONDS);
    if (!(await holdOpen(request, reply, route.url, identity))) return reply;
  });
}

/** Who a request's caller is: the web's session or user key (CSRF checked), the backend's key holder. */
function callerResolution({ surface, config, table, callers }: AdmissionOptions) {
  const trustedOrigins = trustedOriginSet(config.PUBLIC_BASE_URL, config.CSRF_TRUSTED_ORIGINS);
  const keyless = new Set(table.flatMap((entry) => [...entry.keyless]));
  return async (request: FastifyRequest, url: string): Promise<Identity> => {
    if (surface !== 'web') return resolveBackendCaller(request, callers, !keyless.has(url));
    const identity = await resolveWebCaller(request, callers);
    checkCsrf(request, identity, trustedOrigins);
    return identity;
  };
}

/**
 * For an answer that stays open (a WebSocket upgrade, a long-lived route): a web upgrade checked
 * with its service first (false: refused, the reply is the service's answer), then a slot of the
 * caller's and the process's taken (429 when none is left).
 */
function openAnswers({ surface, table, upstreamOf, streams }: AdmissionOptions) {
  // Web urls taking WebSocket upgrades, and their service: each upgrade is checked with it first.
  const upgradeChecked = new Map(
    surface === 'web'
      ? table.flatMap((entry) => [...entry.websocket].map((url) => [url, upstreamOf(entry.service)] as const))
      : [],
  );
  const websocketUrls = new Set(table.flatMap((entry) => [...entry.websocket]));
  const longLived = new Map(table.flatMap((entry) => [...entry.longLived]));
  return async (request: FastifyRequest, reply: FastifyReply, url: string, identity: Identity): Promise<boolean> => {
    const upgrade = websocketUrls.has(url) && isWebSocketUpgrade(request);
    const checkedBy = upgradeChecked.get(url);
    if (checkedBy && upgrade && !(await checkUpgrade(request, reply, checkedBy, UPGRADE_CHECK_TIMEOUT_MS)))
      return false;
    if (upgrade || longLived.get(url)?.has(request.method)) streams.hold(request, reply, identity, upgrade);
    return true;
  };
}
