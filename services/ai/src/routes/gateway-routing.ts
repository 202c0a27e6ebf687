import type { FastifyReply, FastifyRequest } from 'fastify';
import { serviceUrl } from '@agentyard/config';
import type { ServiceApp } from '@agentyard/http';
import {
  fastifyRoute,
  FetchUrl,
  GATEWAY_PLUGINS,
  gatewayRoutingRoutes as spec,
  type GatewayPluginName,
} from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import { parsePluginPrices, PluginFees } from '../domain/gateway-routing/plugin-fees.ts';
import { checkQuota } from '../domain/privileged/token-quota.ts';
import { runPlugin, type GatewayPluginDeps } from '../domain/gateway-routing/plugins.ts';
import { pageFetchOptions } from '../domain/summarizer/page-fetch.ts';
import type { AiRouteOptions } from './privileged/ai.ts';
import { webCallerOf } from './web-caller.ts';

const URL_SHAPE = new RegExp((FetchUrl as { pattern?: string }).pattern!);
const isPlugin = (name: string): name is GatewayPluginName => (GATEWAY_PLUGINS as readonly string[]).includes(name);

/**
 * POST /api/v1/gateway: one shape for scripts and clients, dispatched to a plugin. Each call's fee
 * (GATEWAY_PLUGIN_PRICES_USD) is reserved before the plugin runs and charged when it answered.
 */
export default async function gatewayRoutingRoutes(
  app: ServiceApp,
  { config, system, gateway, lookups, writer }: AiRouteOptions,
) {
  const fees = new PluginFees(gateway, parsePluginPrices(config.GATEWAY_PLUGIN_PRICES_USD), () => writer.flush());
  const plugins: GatewayPluginDeps = {
    gateway,
    agentTurns: {
      agentsUrl: serviceUrl('agents'),
      identitySecret: config.IDENTITY_SECRET,
      identityTtlSeconds: config.IDENTITY_TTL_SECONDS,
      timeoutMs: config.GATEWAY_AGENT_TURN_TIMEOUT_MS,
    },
    fetching: pageFetchOptions(config),
    checkQuota: (access, caller, admin) => checkQuota(config, system, access, caller.userRef, admin),
  };
  const corsOrigins = new Set(
    config.GATEWAY_CORS_ORIGINS.split(',')
      .map((origin) => origin.trim())
      .filter(Boolean)
      .map((origin) => new URL(origin).origin),
  );
  const allowedOrigin = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    return typeof origin === 'string' && corsOrigins.has(origin) ? origin : null;
  };
  /** Browsers of the configured origins may read the answer (errors too); every other origin gets no CORS header. */
  const allowReading = async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = allowedOrigin(request);
    reply.header('vary', 'Origin');
    if (origin) reply.header('access-control-allow-origin', origin);
  };

  // The preflight: answered for the configured origins only (not a catalog route: OPTIONS is no operation of the API).
  app.options(spec.gateway.url, { config: { auth: 'none' } }, async (request, reply) => {
    const origin = allowedOrigin(request);
    if (!origin) throw AiErrors.corsOriginRefused();
    return reply
      .code(204)
      .header('vary', 'Origin')
      .header('access-control-allow-origin', origin)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'authorization, content-type, x-plugin-id')
      .header('access-control-max-age', '600')
      .send();
  });

  app.route({
    ...fastifyRoute(spec.gateway),
    onRequest: allowReading,
    handler: async (request) => {
      const body = request.body;
      const plugin = body.plugin ?? request.headers['x-plugin-id'];
      if (!plugin) throw AiErrors.pluginRequired();
      if (!isPlugin(plugin)) throw AiErrors.unknownPlugin(plugin, GATEWAY_PLUGINS);
      if (plugin === 'agent' && !body.agentId) throw AiErrors.agentIdRequired();
      if (plugin === 'summarize' && !URL_SHAPE.test(body.input))
        throw AiErrors.urlRefused('The summarize plugin takes an http or https URL as input');
      const { caller, access } = await webCallerOf(request, lookups);
      const fee = await fees.reserve(caller, plugin);
      try {
        const { agentId, model, maxTokens } = body;
        const result = await runPlugin(plugins, {
          plugin,
          caller,
          access,
          identity: request.identity,
          input: body.input,
          agentId,
          model,
          maxTokens,
        });
        const payment = await fees.charge(fee, caller, (work) => request.asUser(work));
        return { id: `gw-${request.id}`, plugin, ...result, payment };
      } finally {
        fees.release(fee);
      }
    },
  });
}
