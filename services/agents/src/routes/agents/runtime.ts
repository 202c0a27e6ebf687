import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '@agentyard/http';
import { probeAgent } from '@agentyard/agent-gateway';
import { dependencyStates } from '@agentyard/observability';
import { scopedAgents } from '../../domain/agents/privileged/scoped-agents.ts';
import type { AgentRow } from '../../domain/agents/agent-views.ts';
import { agentStats } from '../../domain/telemetry/agent-stats.ts';
import type { AgentRouteDeps } from './deps.ts';
import { ownedAgentOf } from './owned-agent.ts';

/** Deployments, runtime version, instances, stats and maintenance. */
export default async function runtimeRoutes(app: ServiceApp, { config, context }: AgentRouteDeps) {
  const { runtime, driver } = context;
  const ownedAgent = ownedAgentOf(context);

  const statsOf = (row: AgentRow) => agentStats(context, config, row);

  app.route({
    ...fastifyRoute(spec.deployments),
    handler: async (request, reply) => {
      const row = await scopedAgents(context.db, request.identity.userId).get(request.body.agentId);
      const deployed = await runtime.deploy(row.id);
      await runtime.setStatus(row.id, 'running');
      const current = (await runtime.load(row.id))!;
      return reply.code(deployed.created ? 201 : 200).send({
        success: true as const,
        agentId: row.id,
        status: current.status,
        url: `${config.AGENT_PUBLIC_URL.replace(/\/$/, '')}/${row.id}`,
        container: { id: deployed.containerId, status: await runtime.health(current), hostPort: deployed.hostPort },
      });
    },
  });

  app.route({
    ...fastifyRoute(spec.runtimeVersion),
    handler: async () => {
      const [version, states] = await Promise.all([
        driver.version().catch(() => ({ engine: 'unavailable', version: 'unknown' })),
        dependencyStates(undefined, ['container-engine']),
      ]);
      // The process driver has no engine to ask: it is reachable while this process runs.
      const reachable = (states['container-engine'] ?? 'ok') === 'ok';
      return {
        driver: driver.kind,
        ...version,
        image: driver.defaultImage,
        deployedAt: new Date().toISOString(),
        reachable,
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.runtimeInstances),
    handler: async (request) => {
      const containers = await driver.list();
      const ids = [...new Set(containers.map((c) => c.agentId))];
      // Owners from the rows (a container claimed from the warm ones carries no user label).
      const ownerOf = new Map(
        ids.length
          ? (await context.db.selectFrom('agents').select(['id', 'user_id']).where('id', 'in', ids).execute()).map(
              (r) => [r.id, r.user_id],
            )
          : [],
      );
      const userId = request.identity.userId;
      const instances = containers
        .map((c) => ({ c, owner: ownerOf.get(c.agentId) ?? c.userId }))
        .filter(({ owner }) => !userId || owner === userId)
        .map(({ c, owner }) => ({
          id: c.id,
          status: c.state,
          metadata: {
            agentId: c.agentId,
            userId: owner,
            image: c.image,
            hostPort: c.hostPort,
            startedAt: c.startedAt,
            orphan: !ownerOf.has(c.agentId),
          },
        }));
      return { instances, count: instances.length };
    },
  });

  for (const route of [spec.runtimeInstanceStats, spec.stats]) {
    app.route({
      ...fastifyRoute(route),
      handler: async (request: FastifyRequest) =>
        statsOf(await ownedAgent(request, (request.params as { id: string }).id)),
    } as never);
  }

  app.route({
    ...fastifyRoute(spec.maintenanceStatus),
    handler: async (request) => {
      const row = await scopedAgents(context.db, request.identity.userId).get(request.query.agentId);
      const probe = row.gateway_url
        ? await probeAgent(row.gateway_url, config.AGENT_PROBE_TIMEOUT_MS, config.AGENT_ANSWER_MAX_BYTES)
        : { live: false, ready: null };
      return { agentId: row.id, live: probe.live, ready: probe.ready, health: await runtime.health(row) };
    },
  });

  app.route({
    ...fastifyRoute(spec.maintenanceRestart),
    handler: async (request) => {
      const row = await scopedAgents(context.db, request.identity.userId).get(request.body.agentId);
      await runtime.restart(row.id);
      const current = (await runtime.load(row.id))!;
      return {
        success: true as const,
        id: row.id,
        status: current.status,
        health: await runtime.health(current),
        image: current.image,
        message: 'Agent restarted',
      };
    },
  });
}
