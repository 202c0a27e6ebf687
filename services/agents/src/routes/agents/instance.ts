import type { FastifyRequest } from 'fastify';
import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { parseKeyring } from '@agentyard/crypto';
import { agentStats } from '../../domain/telemetry/agent-stats.ts';
import { getAgent, userRuntime } from '../../domain/agents/agents.ts';
import { AgentErrors } from '../../errors.ts';
import { liveStreamProvider } from '../../domain/runtime/live-stream.ts';
import { provisionUserRuntime } from '../../domain/runtime/runtime-provisioning.ts';
import { agentUrls, type AgentRow } from '../../domain/agents/agent-views.ts';
import type { AgentRouteDeps } from './deps.ts';

/** The web proxy of a user's runtime instance (`/api/instance/*`) and `/api/provision`. */
export default async function instanceRoutes(app: ServiceApp, { config, context, queues }: AgentRouteDeps) {
  const { runtime } = context;
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const streaming = liveStreamProvider(config);

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
      return {
        userId: row.user_id,
        instanceId: row.id,
        name: row.name,
        status: row.status,
        health: await runtime.health(row),
        url: agentUrls(config.AGENT_PUBLIC_URL, row.id).url,
        startedAt: row.started_at ? new Date(row.started_at).toISOString() : null,
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.instanceStats),
    handler: async (request) => agentStats(context, config, await instanceOf(request, request.params.userId)),
  });

  const actions = {
    start: runtime.start,
    stop: runtime.stop,
    restart: runtime.restart,
    repair: runtime.repair,
    'reset-memory': runtime.resetMemory,
  } as const;
  app.route({
    ...fastifyRoute(spec.instanceAction),
    handler: async (request) => {
      const row = await instanceOf(request, request.params.userId);
      await actions[request.params.action].call(runtime, row.id);
      const current = (await runtime.load(row.id))!;
      return {
        success: true as const,
        id: row.id,
        status: current.status,
        health: await runtime.health(current),
        image: current.image,
        message: `Instance ${request.params.action} done`,
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.runtimeProvision),
    handler: async (request) =>
      provisionUserRuntime(
        {
          config,
          runtime,
          allowance: context.allowance,
          queues,
          keyring,
          streaming,
          log: request.log,
          asUser: (work) => request.asUser(work),
        },
        { id: request.identity.userId!, email: request.identity.email ?? '', admin: request.identity.admin },
        request.body,
      ),
  });
}
