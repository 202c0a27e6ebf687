import type { ServiceApp } from '@agentyard/http';
import { IDENTITY_HEADER } from '@agentyard/identity';
import { fastifyRoute, agentRoutes as spec } from '@agentyard/proto-schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import WebSocket from 'ws';
import {
  RELAY_BACKLOG_CLOSE,
  RELAY_BACKLOG_LIMIT_BYTES,
  RELAYED_FRAME_LIMIT_BYTES,
} from '../../domain/gateway/relay-limits.ts';
import { scopedAgents } from '../../domain/agents/privileged/scoped-agents.ts';
import { AgentErrors } from '../../errors.ts';
import type { AgentRouteDeps } from './deps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    agentGatewayUrl: string;
    proxiedAgentId: string;
  }
}

const PREFIX = /^\/api\/runtime\/proxy\/[^/?]+/;
/**
 * Headers of the platform that never reach an agent: its credentials and identity, and the edge's
 * forwarding headers (OpenClaw refuses a request carrying any unless told to trust its proxy; the
 * agent sees the platform as its client).
 */
const PLATFORM_HEADERS = [
  IDENTITY_HEADER,
  'authorization',
  'cookie',
  'x-user-id',
  'x-user-email',
  'forwarded',
  'x-real-ip',
];
const isPlatformHeader = (name: string) => PLATFORM_HEADERS.includes(name) || name.startsWith('x-forwarded-');

/**
 * `ALL /api/runtime/proxy/:agentId/*`: HTTP and WebSocket to that agent's gateway only, the
 * prefix stripped (registered by gateway-proxies.ts, which brings reply-from and the WebSocket server).
 */
export default async function runtimeProxyRoutes(app: ServiceApp, { context }: AgentRouteDeps) {
  app.decorateRequest('agentGatewayUrl', '');
  app.decorateRequest('proxiedAgentId', '');

  const upstreamPath = (request: FastifyRequest) => request.url.replace(PREFIX, '') || '/';

  const route = fastifyRoute(spec.runtimeProxy);
  const resolveAgent = async (request: FastifyRequest) => {
    const row = await context.hibernation.reach(
      await scopedAgents(context.db, request.identity.userId).get((request.params as { agentId: string }).agentId),
    );
    if (!row.gateway_url) throw AgentErrors.notDeployed();
    request.proxiedAgentId = row.id;
    request.agentGatewayUrl = row.gateway_url;
  };
  const forward = (request: FastifyRequest, reply: FastifyReply) => {
    reply.from(`${request.agentGatewayUrl}${upstreamPath(request)}`, {
      rewriteRequestHeaders: (_req, headers) => {
        const forwarded = { ...headers };
        for (const name of Object.keys(forwarded)) if (isPlatformHeader(name)) delete forwarded[name];
        return forwarded;
      },
      onError: (replyOnError) => {
        replyOnError.code(502).send({ error: 'Agent gateway unavailable' });
      },
    });
  };

  // WebSocket upgrades arrive as GET: that method carries the socket handler too.
  app.route({
    ...route,
    method: (route.method as string[]).filter((m) => m !== 'GET') as never,
    preHandler: resolveAgent,
    handler: forward,
  });
  app.route({
    ...route,
    method: 'GET',
    preHandler: resolveAgent,
    handler: forward,
    wsHandler: (socket, request) => {
      // An open socket keeps its agent awake.
      const held = context.hibernation.hold(request.proxiedAgentId);
      socket.once('close', () => void held.then((release) => release()));
      const upstream = new WebSocket(`${request.agentGatewayUrl.replace(/^http/, 'ws')}${upstreamPath(request)}`, {
        handshakeTimeout: 5000,
        // What the agent sends is the tenant's choice: a frame over the limit closes the relay (1009) before it is read.
        maxPayload: RELAYED_FRAME_LIMIT_BYTES,
        headers: request.headers.origin ? { origin: request.headers.origin } : {},
      });
      const pending: [WebSocket.RawData, boolean][] = [];
      socket.on('message', (data, binary) => {
        if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary });
        else pending.push([data, binary]);
      });
      upstream.on('open', () => {
        for (const [data, binary] of pending.splice(0)) upstream.send(data, { binary });
      });
      upstream.on('message', (data, binary) => {
        if (socket.readyState !== WebSocket.OPEN) return;
        // A caller that does not keep up is cut off rather than buffered for without end.
        if (socket.bufferedAmount > RELAY_BACKLOG_LIMIT_BYTES)
          return socket.close(RELAY_BACKLOG_CLOSE, 'too far behind');
        socket.send(data, { binary });
      });
      const closeCode = (code: number) =>
        code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 ? code : 1011;
      upstream.on('close', (code, reason) => socket.close(closeCode(code), reason));
      upstream.on('error', (error) => {
        if ((error as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
          socket.close(1009, 'agent gateway frame too large');
        else socket.close(1011, 'agent gateway unavailable');
      });
      socket.on('close', (code, reason) => {
        if (upstream.readyState === WebSocket.OPEN) upstream.close(closeCode(code), reason);
        else upstream.terminate();
      });
      socket.on('error', () => upstream.terminate());
    },
  });
}
