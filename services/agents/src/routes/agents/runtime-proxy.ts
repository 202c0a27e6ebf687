import type { FastifyReply, FastifyRequest } from 'fastify';
import WebSocket from 'ws';
import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { IDENTITY_HEADER } from '@agentyard/identity';
import { scopedAgents } from '../../domain/agents/agents-system.ts';
import { AgentErrors } from '../../errors.ts';
import type { AgentRouteDeps } from './deps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    agentGatewayUrl: string;
  }
}

const PREFIX = /^\/api\/runtime\/proxy\/[^/?]+/;
/**
 * Headers of the platform that never reach an agent: its credentials and identity, and the edge's
 * forwarding headers (OpenClaw refuses a request carrying any unless told to trust its proxy; the
 * agent sees the platform as its client).
 */
const PLATFORM_HEADERS = [IDENTITY_HEADER, 'authorization', 'cookie', 'x-user-id', 'x-user-email', 'forwarded', 'x-real-ip'];
const isPlatformHeader = (name: string) => PLATFORM_HEADERS.includes(name) || name.startsWith('x-forwarded-');

/**
 * `ALL /api/runtime/proxy/:agentId/*`: HTTP and WebSocket to that agent's gateway only, the
 * prefix stripped (registered by gateway-proxies.ts, which brings reply-from and the WebSocket server).
 */
export default async function runtimeProxyRoutes(app: ServiceApp, { context }: AgentRouteDeps) {
  app.decorateRequest('agentGatewayUrl', '');

  const upstreamPath = (request: FastifyRequest) => request.url.replace(PREFIX, '') || '/';

  const route = fastifyRoute(spec.runtimeProxy);
  const resolveAgent = async (request: FastifyRequest) => {
    const row = await scopedAgents(context.db, request.identity.userId).get((request.params as { agentId: string }).agentId);
    if (!row.gateway_url) throw AgentErrors.notDeployed();
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
  app.route({ ...route, method: (route.method as string[]).filter((m) => m !== 'GET') as never, preHandler: resolveAgent, handler: forward });
  app.route({
    ...route,
    method: 'GET',
    preHandler: resolveAgent,
    handler: forward,
    wsHandler: (socket, request) => {
      const upstream = new WebSocket(`${request.agentGatewayUrl.replace(/^http/, 'ws')}${upstreamPath(request)}`, {
        handshakeTimeout: 5000,
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
        if (socket.readyState === WebSocket.OPEN) socket.send(data, { binary });
      });
      const closeCode = (code: number) => (code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 ? code : 1011);
      upstream.on('close', (code, reason) => socket.close(closeCode(code), reason));
      upstream.on('error', () => socket.close(1011, 'agent gateway unavailable'));
      socket.on('close', (code, reason) => {
        if (upstream.readyState === WebSocket.OPEN) upstream.close(closeCode(code), reason);
        else upstream.terminate();
      });
      socket.on('error', () => upstream.terminate());
    },
  });
}
