import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { createProvisioningAgent, listAgents, userRuntime } from '../../domain/agents/agents.ts';
import { AgentErrors } from '../../errors.ts';
import { queueProvisioning } from '../../domain/runtime/provisioning.ts';
import { provisionedAgent } from '../../domain/agents/agent-views.ts';
import { validateAgentConfig } from '../../domain/agents/config-document.ts';
import type { AgentRouteDeps } from './deps.ts';

/** Web provisioning: the agent is recorded at once as `provisioning`, a queued job deploys it. */
export default async function provisioningRoutes(app: ServiceApp, { config, context, queues }: AgentRouteDeps) {
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);

  app.route({
    ...fastifyRoute(spec.provision),
    handler: async (request, reply) => {
      if (!config.PROVISIONING_ENABLED) throw AgentErrors.provisioningDisabled();
      const check = request.body.config ? validateAgentConfig(request.body.config) : { ok: true as const };
      if (!check.ok) throw AgentErrors.invalidConfig(check.message);
      const { userId, admin } = request.identity;
      await queues.available();
      await context.allowance.admitNew({ userId: userId!, admin }, request.body.tier);
      const row = await request.asUser((trx) =>
        createProvisioningAgent(trx, {
          userId: userId!,
          admin,
          activeStatuses,
          name: request.body.name,
          model: request.body.model ?? 'claude-opus-4-6',
          tier: request.body.tier,
          config: request.body.config ?? {},
          defaultProvider: config.AGENT_DEFAULT_PROVIDER,
          adminAgentLimit: config.ADMIN_AGENT_LIMIT,
        }),
      );
      await queueProvisioning(queues, context.runtime, row.id);
      return reply.code(201).send({ success: true as const, agent: provisionedAgent(row, config.AGENT_PUBLIC_URL) });
    },
  });

  app.route({
    ...fastifyRoute(spec.provisioned),
    handler: async (request) => {
      const rows = await request.asUser(listAgents);
      return { agents: rows.map((row) => provisionedAgent(row, config.AGENT_PUBLIC_URL)), count: rows.length };
    },
  });

  app.route({
    ...fastifyRoute(spec.userRuntime),
    handler: async (request) =>
      request.asUser(async (trx) => {
        const user = await userRuntime(trx, request.identity.userId!);
        const instance = user?.runtime_instance_id
          ? await trx
              .selectFrom('agents')
              .select(['id', 'gateway_token_sealed'])
              .where('id', '=', user.runtime_instance_id)
              .executeTakeFirst()
          : undefined;
        return {
          runtimeUrl: user?.runtime_url ?? null,
          instanceId: user?.runtime_instance_id ?? null,
          gatewayToken: instance?.gateway_token_sealed
            ? openAgentSecret(keyring, instance.id, 'gateway-token', instance.gateway_token_sealed)
            : null,
        };
      }),
  });

  app.route({
    ...fastifyRoute(spec.cloneHealth),
    handler: async () => ({ status: 'ok' as const, service: 'clone' as const, implemented: false as const }),
  });

  app.route({
    ...fastifyRoute(spec.clone),
    handler: async () => {
      throw AgentErrors.cloneNotImplemented();
    },
  });
}
