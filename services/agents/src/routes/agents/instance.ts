import type { FastifyRequest } from 'fastify';
import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { createProvisioningAgent, getAgent, userRuntime } from '../../domain/agents/agents.ts';
import { AgentErrors } from '../../errors.ts';
import { enqueueProvisioning } from '../../domain/agents/provisioning.ts';
import { provisionThroughBackend } from '../../domain/agents/provisioning-backend.ts';
import { createLiveStream, liveStreamProvider, type LiveStream } from '../../domain/agents/live-stream.ts';
import { AGENT_FAILURES, agentUrls, type AgentRow } from '../../domain/agents/shapes.ts';
import type { AgentRouteDeps } from './index.ts';
import { agentStats } from './runtime.ts';

/** The web proxy of a user's runtime instance (`/api/instance/*`) and `/api/provision`. */
export default async function instanceRoutes(app: ServiceApp, { config, context, queues }: AgentRouteDeps) {
  const { runtime } = context;
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const streaming = liveStreamProvider(config);

  /** Spec §4.5: a live stream when the provider is configured; a provider failure does not fail provisioning. */
  const liveStreamFor = async (request: FastifyRequest, fromBackend: { streamKey?: string; liveStreamId?: string }): Promise<{ streamKey: string | null; liveStreamId: string | null }> => {
    if (!streaming) return { streamKey: fromBackend.streamKey ?? null, liveStreamId: fromBackend.liveStreamId ?? null };
    const stream: LiveStream | null = await createLiveStream(streaming).catch((error: Error) => {
      request.log.warn({ err: { message: error.message } }, 'live stream could not be created');
      return null;
    });
    return { streamKey: stream?.streamKey ?? null, liveStreamId: stream?.liveStreamId ?? null };
  };

  /** The caller's own instance: another user's id, or no instance yet, is 404. */
  const instanceOf = async (request: FastifyRequest, userId: string): Promise<AgentRow> => {
    if (userId !== request.identity.userId) throw AgentErrors.notFound();
    return request.asUser(async (trx) => {
      const user = await userRuntime(trx, userId);
      if (!user?.runtime_instance_id) throw AgentErrors.notFound();
      return getAgent(trx, user.runtime_instance_id);
    });
  };

  app.route({
    ...fastifyRoute(spec.instance),
    handler: async (request) => {
      const row = await instanceOf(request, request.params.userId);
      return { userId: row.user_id, instanceId: row.id, name: row.name, status: row.status, health: await runtime.health(row), url: agentUrls(config.AGENT_PUBLIC_URL, row.id).url, startedAt: row.started_at ? new Date(row.started_at).toISOString() : null };
    },
  });

  app.route({
    ...fastifyRoute(spec.instanceStats),
    handler: async (request) => agentStats(context, config, await instanceOf(request, request.params.userId)),
  });

  const actions = { start: runtime.start, stop: runtime.stop, restart: runtime.restart, repair: runtime.repair, 'reset-memory': runtime.resetMemory } as const;
  app.route({
    ...fastifyRoute(spec.instanceAction),
    handler: async (request) => {
      const row = await instanceOf(request, request.params.userId);
      await actions[request.params.action].call(runtime, row.id);
      const current = (await runtime.load(row.id))!;
      return { success: true as const, id: row.id, status: current.status, health: await runtime.health(current), image: current.image, message: `Instance ${request.params.action} done` };
    },
  });

  app.route({
    ...fastifyRoute(spec.runtimeProvision),
    handler: async (request) => {
      if (!config.PROVISIONING_ENABLED) throw AgentErrors.provisioningDisabled();
      // The session's identity, never the body's email.
      const user = { id: request.identity.userId!, email: request.identity.email ?? '' };
      const { email: _ignored, ...wanted } = request.body;
      for (const url of [config.PROVISION_BACKEND_URL, config.PROVISION_FALLBACK_URL].filter(Boolean)) {
        try {
          const reply = await provisionThroughBackend(url, user, wanted, config.PROVISION_TIMEOUT_MS);
          await request.asUser((trx) => trx.updateTable('users').set({ runtime_url: reply.url, runtime_instance_id: reply.instanceId ?? null }).where('id', '=', user.id).execute());
          return {
            success: true as const, userId: user.id, url: reply.url, ...(await liveStreamFor(request, reply)),
            ...(reply.subdomain ? { subdomain: reply.subdomain } : {}), ...(reply.container ? { container: { status: 'deploying' as const } } : {}),
          };
        } catch (error) {
          request.log.warn({ err: { message: (error as Error).message } }, 'provisioning backend failed; trying the next path');
        }
      }
      // Direct: the platform's own runtime. Plan and subscription rules still apply (403/429).
      await queues.available();
      const row = await request.asUser((trx) => createProvisioningAgent(trx, {
        userId: user.id, admin: request.identity.admin, activeStatuses: activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES), name: wanted.name ?? `${wanted.agentType ?? 'business'} agent`, model: 'claude-opus-4-6', tier: undefined,
        config: {}, defaultProvider: config.AGENT_DEFAULT_PROVIDER, adminAgentLimit: config.ADMIN_AGENT_LIMIT,
      }));
      try {
        await runtime.deploy(row.id);
        await runtime.setStatus(row.id, 'deploying');
        await enqueueProvisioning(queues, row.id);
        await runtime.recordUserRuntime(row.id);
      } catch (error) {
        request.log.error({ agentId: row.id, err: { message: (error as Error).message } }, 'direct provisioning failed');
        await runtime.failDeployment(row.id, AGENT_FAILURES.directFailed, (error as Error).message);
        throw AgentErrors.provisioningFailed();
      }
      const deployed = (await runtime.load(row.id))!;
      const { url, websocketUrl } = agentUrls(config.AGENT_PUBLIC_URL, row.id);
      const token = openAgentSecret(keyring, row.id, 'gateway-token', deployed.gateway_token_sealed!);
      return { success: true as const, status: 'deploying' as const, url, controlUiUrl: `${url}/?gatewayUrl=${encodeURIComponent(websocketUrl)}&token=${encodeURIComponent(token)}` };
    },
  });
}
