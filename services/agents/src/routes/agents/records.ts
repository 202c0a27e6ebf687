import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { FastifyRequest } from 'fastify';
import { activeStatusesOf } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { listAgents, markDeleted, renameAgent } from '../../domain/agents/agents.ts';
import { scopedAgents } from '../../domain/agents/privileged/scoped-agents.ts';
import { AgentErrors } from '../../errors.ts';
import { backendDetail, backendListItem, webAgent, webAgentDetail } from '../../domain/agents/agent-views.ts';
import { offeredImages } from '../../domain/runtime/agent-actions.ts';
import { enqueueConfigApply } from '../../domain/runtime/config-apply.ts';
import { queueProvisioning } from '../../domain/runtime/provisioning.ts';
import type { AgentRouteDeps } from './deps.ts';
import { ownedAgentOf } from './owned-agent.ts';

/** Agent records: list, read, rename, change, delete, gateway token. */
export default async function agentRecordRoutes(app: ServiceApp, { config, context, queues }: AgentRouteDeps) {
  const publicUrl = config.AGENT_PUBLIC_URL;
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const backend = (request: FastifyRequest) => scopedAgents(context.db, request.identity.userId);
  const ownedAgent = ownedAgentOf(context);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const images = {
    defaultImage: context.driver.defaultImage,
    offered: offeredImages(context.driver.defaultImage, config.AGENT_IMAGES_ALLOWED),
  };

  app.route({
    ...fastifyRoute(spec.list),
    handler: async (request) => {
      if (request.identity.surface === 'backend') {
        if (request.identity.auth !== 'service') throw AgentErrors.userContextRequired();
        return (await backend(request).list()).map((row) => backendListItem(row, publicUrl));
      }
      const rows = request.identity.userId ? await request.asUser(listAgents) : [];
      return { agents: rows.map((row) => webAgent(row, publicUrl)), count: rows.length, status: 'ok' as const };
    },
  });

  app.route({
    ...fastifyRoute(spec.create),
    handler: async (request, reply) => {
      if (config.PROVISIONING_ENABLED) await queues.available();
      const row = await backend(request).create({
        name: request.body.name,
        plan: request.body.config?.plan,
        aiProvider: request.body.config?.aiProvider,
      });
      // Pending until its provisioning job has deployed it (with the kill switch on, until a start).
      if (config.PROVISIONING_ENABLED) await queueProvisioning(queues, context.runtime, row.id);
      const { url } = backendListItem(row, publicUrl);
      return reply.code(201).send({
        id: row.id,
        name: row.name,
        agentId: row.id,
        status: row.status,
        subdomain: row.subdomain,
        url,
        createdAt: row.created_at.toISOString(),
      });
    },
  });

  app.route({
    ...fastifyRoute(spec.get),
    handler: async (request) => {
      const row = await ownedAgent(request, request.params.id);
      return request.identity.surface === 'web'
        ? { agent: webAgentDetail(row, publicUrl, images, request.identity), status: 'ok' as const }
        : backendDetail(row, publicUrl);
    },
  });

  app.route({
    ...fastifyRoute(spec.rename),
    // The database is the agent's record of truth here: there is no separate backend copy to sync.
    handler: async (request) => {
      const row = await request.asUser((trx) => renameAgent(trx, request.params.id, request.body.name));
      return {
        success: true as const,
        agent: { id: row.id, name: row.name, status: row.status, updatedAt: new Date(row.updated_at).toISOString() },
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.update),
    handler: async (request) => {
      if (request.body.config) await queues.available();
      const row = await backend(request).update(request.params.id, request.body, {
        admin: request.identity.admin,
        activeStatuses,
      });
      if (request.body.config) await enqueueConfigApply(queues, row.id, row.updated_at);
      const message = request.body.config
        ? 'Agent updated; its container takes the new configuration in the background'
        : 'Agent updated';
      return {
        id: row.id,
        plan: row.plan,
        aiProvider: row.ai_provider,
        subdomain: row.subdomain,
        status: row.status,
        message,
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.remove),
    handler: async (request) => {
      const { id } = request.params;
      if (request.identity.surface === 'web') {
        // Under row-level security: another user's agent is 404 before anything is touched.
        if ((await request.asUser((trx) => markDeleted(trx, request.identity.userId!, id))) === 'remove')
          await context.runtime.remove(id);
        return { id, deleted: true as const };
      }
      if (request.identity.auth !== 'service') throw AgentErrors.userContextRequired();
      const row = await backend(request)
        .get(id)
        .catch(() => null);
      if (row) await context.runtime.remove(row.id);
      return { id, deleted: true as const };
    },
  });

  app.route({
    ...fastifyRoute(spec.token),
    handler: async (request) => {
      const row = await ownedAgent(request, request.params.id);
      if (!row.gateway_token_sealed) throw AgentErrors.noGatewayToken();
      return { token: openAgentSecret(keyring, row.id, 'gateway-token', row.gateway_token_sealed) };
    },
  });
}
