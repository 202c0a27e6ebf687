import type { FastifyRequest } from 'fastify';
import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { scopedAgents } from '../../domain/agents/agents-system.ts';
import type { AgentRuntime } from '../../domain/agents/agent-runtime-system.ts';
import type { AgentRouteDeps } from './deps.ts';

type Operation = (runtime: AgentRuntime, agentId: string, request: FastifyRequest) => Promise<void>;

/** Backend lifecycle operations; each answers the agent's status and its container's health after it. */
export default async function lifecycleRoutes(app: ServiceApp, { context }: AgentRouteDeps) {
  const operations: [keyof typeof spec, Operation, string][] = [
    ['start', (r, id) => r.start(id), 'Agent started'],
    ['stop', (r, id) => r.stop(id), 'Agent stopped'],
    ['restart', (r, id) => r.restart(id), 'Agent restarted'],
    ['updateImage', (r, id, request) => r.updateImage(id, (request.body as { image?: string } | undefined)?.image ?? context.driver.defaultImage), 'Agent image updated'],
    ['repair', (r, id) => r.repair(id), 'Agent container recreated from its stored configuration'],
    ['resetMemory', (r, id) => r.resetMemory(id), 'Agent memory reset and restarted'],
  ];
  for (const [name, operation, message] of operations) {
    app.route({
      ...fastifyRoute(spec[name] as never),
      handler: async (request: FastifyRequest) => {
        const { id } = request.params as { id: string };
        await scopedAgents(context.db, request.identity.userId).get(id);
        await operation(context.runtime, id, request);
        const row = (await context.runtime.load(id))!;
        return { success: true as const, id, status: row.status, health: await context.runtime.health(row), image: row.image, message };
      },
    } as never);
  }
}
