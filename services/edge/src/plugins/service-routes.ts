import type { IncomingMessage } from 'node:http';
import httpProxy from '@fastify/http-proxy';
import type { ServiceApp } from '@agentyard/http';
import type { Method, ServiceName, Surface } from '@agentyard/proto-schemas';
import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { EdgeConfig } from '../config.ts';
import { agentAuthorization, type AgentKeys } from './agent-keys.ts';
import { BACKEND_UNAVAILABLE, POOL_OPTIONS, upstream } from './forward.ts';
import { forwardedHeaders } from './forwarded-headers.ts';
import type { ServiceRoutes } from './routing.ts';

/** The methods forwarded on every catalogued url: the service answers for those it does not take. */
export const FORWARDED_METHODS: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

/** Relays a request to its service (forward.ts), its body streamed up to `maxBytes` on a streamed route. */
type ForwardHandler = (request: FastifyRequest, reply: FastifyReply, streamedBody?: { maxBytes: number }) => void;

/** A url whose body (on `methods`) is relayed as it arrives, up to `maxBytes`. */
interface StreamedRoute {
  url: string;
  methods: Method[];
  maxBytes: number;
  forward: ForwardHandler;
}

export interface ServiceRoutesOptions {
  surface: Surface;
  config: EdgeConfig;
  /** The surface's urls by service (routing.ts), and where each service is. */
  table: ServiceRoutes[];
  upstreamOf: (service: ServiceName) => string;
  agentKeys: AgentKeys;
}

/**
 * Bodies (at most `bodyLimit`, enforced by Fastify here even when chunked) are read whole and
 * forwarded as one Buffer rather than piped: on undici's stream-body path every request's objects
 * outlived two young-generation GCs, were promoted, and made the edge's scavenges long (p99) and
 * its old space grow until mark-compact (RSS). Bodies stay bytes: nothing is parsed or re-encoded.
 */
export function readBodiesWhole(app: ServiceApp, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit },
    (_request: FastifyRequest, body: Buffer, done: (error: null, body: Buffer) => void) => done(null, body),
  );
}

/**
 * Every catalogued url of a surface, forwarded to its service by the edge's own relay (forward.ts):
 * @fastify/reply-from cost about a third more CPU per request for the same work. Urls that take
 * WebSocket upgrades stay on @fastify/http-proxy, which carries the upgrade and plain requests alike.
 */
export default async function serviceRoutes(app: ServiceApp, options: ServiceRoutesOptions) {
  const streamedRoutes: StreamedRoute[] = [];
  for (const entry of options.table) {
    const origin = options.upstreamOf(entry.service);
    streamedRoutes.push(...relayedRoutes(app, entry, relayTo(app, origin, entry, options)));
    if (entry.websocket.size) await app.register(httpProxy, webSocketProxy(origin, entry, options) as never);
  }
  if (streamedRoutes.length) await app.register(streamedBodyRoutes, { routes: streamedRoutes });
}

/** The relay to one service, over connections of its own that close with the surface. */
function relayTo(
  app: ServiceApp,
  origin: string,
  entry: ServiceRoutes,
  { surface, config, agentKeys }: ServiceRoutesOptions,
): ForwardHandler {
  const service = upstream(origin, {
    connections: config.EDGE_SERVICE_CONNECTIONS,
    streamConnections: config.EDGE_STREAMS_MAX,
    queueTimeoutMs: config.EDGE_QUEUE_TIMEOUT_MS,
  });
  app.addHook('onClose', () => service.close());
  return (request, reply, streamedBody) => {
    const url = request.routeOptions.url ?? '';
    // What the service answers an agent's own key teaches the agent-key rate limits whose key it is.
    const bearer = entry.bearerForwarded.has(url) ? agentAuthorization(request.headers) : undefined;
    service.forward(request, reply, forwardedHeaders(request, request.headers, surface, entry), {
      streamedBody,
      longLived: entry.longLived.get(url)?.has(request.method),
      onStatus: bearer ? (status) => agentKeys.learn(bearer, status) : undefined,
    });
  };
}

/**
 * The service's urls without WebSocket upgrades, every method relayed; returned, the url-methods
 * whose body streams (uploads), which are routed apart (streamedBodyRoutes).
 */
function relayedRoutes(app: ServiceApp, entry: ServiceRoutes, forward: ForwardHandler): StreamedRoute[] {
  const streamedRoutes: StreamedRoute[] = [];
  for (const url of entry.urls) {
    if (entry.websocket.has(url)) continue;
    const streamed = entry.streamed.get(url);
    if (streamed) streamedRoutes.push({ url, ...streamed, forward });
    const method = FORWARDED_METHODS.filter((m) => !streamed?.methods.includes(m as Method));
    if (method.length) app.route({ method, url, handler: (request, reply) => forward(request, reply) });
  }
  return streamedRoutes;
}

/** @fastify/http-proxy's options for the service's WebSocket urls: the same headers forwarded, upgrades included. */
function webSocketProxy(origin: string, entry: ServiceRoutes, { surface, config }: ServiceRoutesOptions) {
  return {
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
  };
}

/**
 * Streamed bodies are passed on as they arrive: in a context of its own (created after the
 * surface's hooks, so it has every one of them), the parser hands over the request stream itself.
 */
async function streamedBodyRoutes(app: ServiceApp, { routes }: { routes: StreamedRoute[] }) {
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
