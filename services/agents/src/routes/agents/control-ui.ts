import { createReadStream } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type WebSocket from 'ws';
import { agentWorkRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import { parseKeyring } from '@agentyard/crypto';
import type { ServiceApp } from '@agentyard/http';
import { UPGRADE_CHECK_HEADER } from '@agentyard/identity';
import { OPENCLAW_CONTROL_UI_ROOT } from '@agentyard/runtime';
import { runningAgentGateway, type AgentGateway } from '../../domain/gateway/agent-gateway-access.ts';
import { controlUiBasePath, controlUiUpstreamPath, relayControlUiSession } from '../../domain/gateway/control-ui.ts';
import {
  controlUiCsp,
  controlUiFile,
  controlUiPage,
  controlUiRuntimeConfig,
  openControlUiCopy,
} from '../../domain/gateway/control-ui-copy.ts';
import { AgentErrors } from '../../errors.ts';
import type { AgentRouteDeps } from './deps.ts';
import { reachableAgentOf } from './owned-agent.ts';

declare module 'fastify' {
  interface FastifyRequest {
    controlUi: { gateway: AgentGateway; path: string; agentName: string } | null;
  }
}

/** Where the page reads its runtime config: OpenClaw's path and its legacy one (matchesControlUiBootstrapConfigPath). */
const RUNTIME_CONFIG_PATHS = new Set(['/control-ui-config.json', '/__openclaw/control-ui-config.json']);

/**
 * `GET /api/control-ui/:agentId[/*]`: the agent's own OpenClaw Control UI for its owner (anyone else:
 * 404). Its page, files and runtime config come from the platform's own copy (domain/agent-work/
 * control-ui-copy.ts), never from the agent's gateway; only its WebSocket is relayed to the gateway
 * (domain/gateway/control-ui.ts says how without the browser holding the gateway token).
 */
export default async function controlUiRoutes(app: ServiceApp, { config, context }: AgentRouteDeps) {
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const reachableAgent = reachableAgentOf(context);
  const consoleOrigin = new URL(config.PUBLIC_BASE_URL).origin;
  const relayOptions = { consoleOrigin, connectTimeoutMs: config.AGENT_GATEWAY_READ_TIMEOUT_MS, log: app.log };
  const copy = openControlUiCopy(config.CONTROL_UI_ROOT || OPENCLAW_CONTROL_UI_ROOT);
  if (!copy)
    app.log.warn(
      { root: config.CONTROL_UI_ROOT || OPENCLAW_CONTROL_UI_ROOT },
      'control UI: no copy of the OpenClaw Control UI here, /api/control-ui answers 503',
    );
  app.decorateRequest('controlUi', null);

  const resolveGateway = async (request: FastifyRequest) => {
    const { agentId } = request.params as { agentId: string };
    const agent = await reachableAgent(request, agentId);
    const gateway = runningAgentGateway(agent, keyring);
    const path = controlUiUpstreamPath(request.url, agentId);
    if (!path) throw AgentErrors.controlUiPathNotFound();
    request.controlUi = { gateway, path, agentName: agent.name };
  };

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    // The edge's check before it lets a WebSocket upgrade through: the checks above passed.
    if (request.headers[UPGRADE_CHECK_HEADER]) return reply.send('');
    if (!copy) throw AgentErrors.controlUiNotInstalled();
    const { gateway, path, agentName } = request.controlUi!;
    const base = controlUiBasePath(gateway.agentId);
    const url = new URL(path, 'http://platform.invalid');
    const uiPath = url.pathname.slice(base.length);
    reply
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');
    if (uiPath === '') return reply.redirect(`${base}/${url.search}`);
    if (RUNTIME_CONFIG_PATHS.has(uiPath)) {
      return reply
        .header('content-security-policy', "default-src 'none'")
        .header('cache-control', 'no-cache')
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(controlUiRuntimeConfig(copy, base, agentName)));
    }
    const file =
      uiPath === '/'
        ? null
        : await controlUiFile(copy, uiPath.slice(1), String(request.headers['accept-encoding'] ?? ''));
    if (file) {
      reply
        .header('content-security-policy', controlUiCsp(consoleOrigin, base))
        .header('vary', 'accept-encoding')
        .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
        .header('content-length', file.size)
        .type(file.contentType);
      if (file.encoding) reply.header('content-encoding', file.encoding);
      return reply.send(createReadStream(file.path));
    }
    // The page at the base path, and for the UI's own routes (chat, approvals…) when a browser navigates to one.
    if (uiPath !== '/' && (/\.[A-Za-z0-9]+$/.test(uiPath) || !/text\/html/.test(String(request.headers.accept ?? ''))))
      throw AgentErrors.controlUiPathNotFound();
    const page = controlUiPage(copy, base, consoleOrigin);
    return reply
      .header('content-security-policy', page.csp)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(page.html);
  };
  const relay = (socket: WebSocket, request: FastifyRequest) => {
    // An open Control UI keeps its agent awake.
    const held = context.hibernation.hold(request.controlUi!.gateway.agentId);
    socket.once('close', () => void held.then((release) => release()));
    return relayControlUiSession(socket, request.controlUi!.gateway, relayOptions);
  };

  // The page and its files under `<base>/`; the WebSocket at `<base>`, where the page opens it (and under it).
  app.route({ ...fastifyRoute(spec.controlUi), preHandler: resolveGateway, handler: serve, wsHandler: relay });
  app.route({ ...fastifyRoute(spec.controlUiSocket), preHandler: resolveGateway, handler: serve, wsHandler: relay });
}
