import type { FastifyReply, FastifyRequest } from 'fastify';
import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { getAgent } from '../../domain/agents/agents.ts';
import { AgentErrors } from '../../errors.ts';
import { scopedAgents } from '../../domain/agents/privileged/scoped-agents.ts';
import {
  allowedImage,
  checkAgentAction,
  enqueueAgentAction,
  type AgentAction,
} from '../../domain/runtime/agent-actions.ts';
import type { AgentRuntime } from '../../domain/runtime/privileged/agent-runtime.ts';
import type { AgentRouteDeps } from './deps.ts';

type Operation = (runtime: AgentRuntime, agentId: string, request: FastifyRequest) => Promise<void>;

/**
 * Lifecycle operations on both surfaces, at the same paths. Backend (API key): done when answered,
 * with the agent's status and its container's health after it. Web (the owner, through row-level
 * security): checked, queued on the lifecycle queue and answered 202; the job runs the same
 * lifecycle and its outcome reaches the owner as an agent-status event.
 */
export default async function lifecycleRoutes(app: ServiceApp, { config, context, queues }: AgentRouteDeps) {
  const operations: [keyof typeof spec, AgentAction, Operation, string][] = [
    ['start', 'start', (r, id) => r.start(id), 'Agent started'],
    ['stop', 'stop', (r, id) => r.stop(id), 'Agent stopped'],
    ['restart', 'restart', (r, id) => r.restart(id), 'Agent restarted'],
    [
      'updateImage',
      'update',
      (r, id, request) => r.updateImage(id, imageOf(request) ?? context.driver.defaultImage),
      'Agent image updated',
    ],
    ['repair', 'repair', (r, id) => r.repair(id), 'Agent container recreated from its stored configuration'],
    ['resetMemory', 'reset-memory', (r, id) => r.resetMemory(id), 'Agent memory reset and restarted'],
  ];

  const onWeb = async (request: FastifyRequest, reply: FastifyReply, id: string, action: AgentAction) => {
    const row = await request.asUser((trx) => getAgent(trx, id));
    const image =
      action === 'update'
        ? allowedImage(imageOf(request), context.driver.defaultImage, config.AGENT_IMAGES_ALLOWED)
        : undefined;
    await checkAgentAction(row, action, context.allowance.admit);
    await enqueueAgentAction(queues, { agentId: id, action, ...(image ? { image } : {}) });
    return reply.code(202).send({ id, action, status: 'queued' as const });
  };

  for (const [name, action, operation, message] of operations) {
    app.route({
      ...fastifyRoute(spec[name] as never),
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const { id } = request.params as { id: string };
        if (request.identity.surface === 'web') return onWeb(request, reply, id, action);
        if (request.identity.auth !== 'service') throw AgentErrors.userContextRequired();
        await scopedAgents(context.db, request.identity.userId).get(id);
        await operation(context.runtime, id, request);
        const row = (await context.runtime.load(id))!;
        return {
          success: true as const,
          id,
          status: row.status,
          health: await context.runtime.health(row),
          image: row.image,
          message,
        };
      },
    } as never);
  }
}

const imageOf = (request: FastifyRequest) => (request.body as { image?: string } | undefined)?.image;
