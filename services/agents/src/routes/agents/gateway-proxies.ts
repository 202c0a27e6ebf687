import type { ServiceApp } from '@agentyard/http';
import replyFrom from '@fastify/reply-from';
import websocket from '@fastify/websocket';
import { RELAYED_FRAME_LIMIT_BYTES } from '../../domain/gateway/relay-limits.ts';
import controlUiRoutes from './control-ui.ts';
import type { AgentRouteDeps } from './deps.ts';
import runtimeProxyRoutes from './runtime-proxy.ts';

/**
 * The routes that proxy HTTP and WebSocket to agents' gateways: the backend's runtime proxy and the
 * owner's Control UI. One registration of @fastify/websocket for both, since each registration
 * answers every upgrade of the server. Bodies pass through unparsed.
 */
export default async function gatewayProxyRoutes(app: ServiceApp, deps: AgentRouteDeps) {
  await app.register(replyFrom, {
    undici: { connections: 64, headersTimeout: 60_000, bodyTimeout: 300_000, connectTimeout: 5000 },
  });
  await app.register(websocket, { options: { maxPayload: RELAYED_FRAME_LIMIT_BYTES } });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  await app.register(runtimeProxyRoutes, deps);
  await app.register(controlUiRoutes, deps);
}
