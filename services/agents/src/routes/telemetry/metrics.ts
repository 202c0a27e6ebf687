import { agentWorkspaceRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { getAgent } from '../../domain/agents/agents.ts';
import { agentMetrics } from '../../domain/telemetry/metrics-history.ts';

export default async function metricsRoutes(app: ServiceApp) {
  app.route({
    ...fastifyRoute(spec.metrics),
    handler: async (request) =>
      request.asUser(async (trx) => {
        const agent = await getAgent(trx, request.query.agentId);
        return agentMetrics(trx, agent.id, request.query.range ?? '24h');
      }),
  });
}
