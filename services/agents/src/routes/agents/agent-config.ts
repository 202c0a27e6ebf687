import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { getAgent } from '../../domain/agents/agents.ts';
import { agentConfigView, saveAgentConfig } from '../../domain/agents/agent-config.ts';
import { enqueueConfigApply } from '../../domain/agents/config-apply.ts';
import { planCaller } from '../../domain/agents/plan-limits.ts';
import { configFrom } from '../workspace/config.ts';
import type { AgentRouteDeps } from './deps.ts';

/** One agent's configuration (spec §4.5), its owner only; a save is applied to the container by a lifecycle job. */
export default async function agentConfigRoutes(app: ServiceApp, { config: settings, queues }: AgentRouteDeps) {
  const activeStatuses = activeStatusesOf(settings.SUBSCRIPTION_ACTIVE_STATUSES);
  app.route({
    ...fastifyRoute(spec.config),
    handler: async (request) => agentConfigView(await request.asUser((trx) => getAgent(trx, request.params.id))),
  });

  app.route({
    ...fastifyRoute(spec.saveConfig),
    handler: async (request) => {
      const config = configFrom(request.body.config);
      await queues.available();
      const row = await request.asUser((trx) => saveAgentConfig(trx, planCaller(request.identity, activeStatuses), request.params.id, config));
      await enqueueConfigApply(queues, row.id, row.updated_at);
      const { agentId, config: saved, updatedAt } = agentConfigView(row);
      return { success: true as const, agentId, config: saved, updatedAt };
    },
  });
}
