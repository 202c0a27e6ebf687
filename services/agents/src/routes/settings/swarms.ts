import { activeStatusesOf } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, swarmRoutes as spec } from '@agentyard/proto-schemas';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import type { FastifyRequest } from 'fastify';
import { planCaller, planOf } from '../../domain/agents/plan-limits.ts';
import {
  createSwarm,
  deleteSwarm,
  deleteSwarmRun,
  getSwarm,
  getSwarmRun,
  listSwarms,
  recordSwarmRun,
  SWARM_RUN_JOB,
  swarmRunJobId,
  updateSwarm,
  type SwarmRunJob,
} from '../../domain/settings/swarms.ts';

/** Swarms and their runs (issue 32): the caller's own, through row-level security; a run is a job of the swarm-runs queue. */
export default async function swarmRouteGroup(
  app: ServiceApp,
  { queues, subscriptionActiveStatuses }: { queues: QueueSet; subscriptionActiveStatuses: string },
) {
  const activeStatuses = activeStatusesOf(subscriptionActiveStatuses);
  const userOf = (request: FastifyRequest) => request.identity.userId!;
  /** The caller's plan, which sets how many swarms, members and runs a day they may have. */
  const planNameOf = async (request: FastifyRequest) =>
    request.identity.admin
      ? 'network'
      : ((await request.asUser((trx) => planOf(trx, planCaller(request.identity, activeStatuses)))) ?? 'free');

  app.route({
    ...fastifyRoute(spec.listSwarms),
    handler: async (request) => ({ swarms: await request.asUser(listSwarms) }),
  });

  app.route({
    ...fastifyRoute(spec.createSwarm),
    handler: async (request, reply) => {
      const plan = await planNameOf(request);
      return reply
        .code(201)
        .send({ swarm: await request.asUser((trx) => createSwarm(trx, userOf(request), plan, request.body)) });
    },
  });

  app.route({
    ...fastifyRoute(spec.getSwarm),
    handler: async (request) => ({ swarm: await request.asUser((trx) => getSwarm(trx, request.params.id)) }),
  });

  app.route({
    ...fastifyRoute(spec.updateSwarm),
    handler: async (request) => {
      const plan = await planNameOf(request);
      return {
        swarm: await request.asUser((trx) => updateSwarm(trx, userOf(request), plan, request.params.id, request.body)),
      };
    },
  });

  app.route({
    ...fastifyRoute(spec.deleteSwarm),
    handler: async (request) => {
      await request.asUser((trx) => deleteSwarm(trx, request.params.id));
      return { deleted: true as const, id: request.params.id };
    },
  });

  app.route({
    ...fastifyRoute(spec.startSwarmRun),
    handler: async (request, reply) => {
      const { id } = request.params;
      await queues.available();
      const plan = await planNameOf(request);
      const runId = await request.asUser((trx) => recordSwarmRun(trx, userOf(request), plan, id, request.body));
      try {
        await queues.add(QUEUES.swarmRuns, SWARM_RUN_JOB, { runId } satisfies SwarmRunJob, {
          jobId: swarmRunJobId(runId),
          attempts: 1,
        });
      } catch (error) {
        await request.asUser((trx) => deleteSwarmRun(trx, runId));
        throw error;
      }
      return reply.code(202).send({ run: await request.asUser((trx) => getSwarmRun(trx, id, runId)) });
    },
  });

  app.route({
    ...fastifyRoute(spec.getSwarmRun),
    handler: async (request) => ({
      run: await request.asUser((trx) => getSwarmRun(trx, request.params.id, request.params.runId)),
    }),
  });
}
