import type { FastifyReply, FastifyRequest } from 'fastify';
import type WebSocket from 'ws';
import { agentWorkRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import { parseKeyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import { UPGRADE_CHECK_HEADER } from '@agentyard/identity';
import { runningAgentGateway, type AgentGateway } from '../../domain/agent-work/agent-gateway-access.ts';
import { controlUiRequestHeaders, controlUiUpstreamPath, relayControlUiSession } from '../../domain/agent-work/control-ui.ts';
import { AgentErrors } from '../../errors.ts';
import type { AgentRouteDeps } from './deps.ts';
import { ownedAgentOf } from './owned-agent.ts';

declare module 'fastify' {
  interface FastifyRequest {
    controlUi: { gateway: AgentGateway; path: string } | null;
  }
}

/**
 * `GET /api/control-ui/:agentId[/*]`: the agent's own OpenClaw Control UI for its owner (anyone else:
 * 404), its page and assets over HTTP and its WebSocket (domain/agent-work/control-ui.ts says how
 * the gateway is authenticated without the browser holding its token).
 */
export default async function controlUiRoutes(app: ServiceApp, { config, context }: AgentRouteDeps) {
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const ownedAgent = ownedAgentOf(context);
  const relayOptions = { consoleOrigin: new URL(config.PUBLIC_BASE_URL).origin, connectTimeoutMs: config.AGENT_GATEWAY_READ_TIMEOUT_MS, log: app.log };
  app.decorateRequest('controlUi', null);

  const resolveGateway = async (request: FastifyRequest) => {
    const { agentId } = request.params as { agentId: string };
    const gateway = runningAgentGateway(await ownedAgent(request, agentId), keyring);
    const path = controlUiUpstreamPath(request.url, agentId);
    if (!path) throw AgentErrors.controlUiPathNotFound();
    request.controlUi = { gateway, path };
  };

  const forward = (request: FastifyRequest, reply: FastifyReply) => {
    // The edge's check before it lets a WebSocket upgrade through: the checks above passed.
    if (request.headers[UPGRADE_CHECK_HEADER]) {
      reply.send('');
      return;
    }
    const { gateway, path } = request.controlUi!;
    reply.from(`${gateway.baseUrl}${path}`, {
      rewriteRequestHeaders: (_request, headers) => controlUiRequestHeaders(headers, gateway.gatewayToken),
      rewriteHeaders: (headers) => { const { 'set-cookie': _cookie, ...kept } = headers; return kept; },
      onError: (replyOnError) => { replyOnError.code(502).send({ error: 'Agent gateway unavailable' }); },
    });
  };
  const relay = (socket: WebSocket, request: FastifyRequest) => relayControlUiSession(socket, request.controlUi!.gateway, relayOptions);

  // The page and its assets under `<base>/`; the WebSocket at `<base>`, where the page opens it (and under it).
  app.route({ ...fastifyRoute(spec.controlUi), preHandler: resolveGateway, handler: forward, wsHandler: relay });
  app.route({ ...fastifyRoute(spec.controlUiSocket), preHandler: resolveGateway, handler: forward, wsHandler: relay });
}
