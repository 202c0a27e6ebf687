import { agentWatchdogRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { getAgent } from '../../domain/agents/agents.ts';
import { agentEvents } from '../../domain/telemetry/agent-events.ts';

export default async function agentEventRoutes(app: ServiceApp) {
  app.route({
    ...fastifyRoute(spec.agentEvents),
    handler: async (request) =>
      request.asUser(async (trx) => {
        const agent = await getAgent(trx, request.params.id);
        return { agentId: agent.id, events: await agentEvents(trx, agent.id, request.query.limit ?? 50) };
      }),
  });
}
