import { fastifyRoute, schedulingRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { Queue } from '@agentyard/queue';
import { listHeartbeatRuns, readHeartbeat, removeHeartbeat, saveHeartbeat } from '../domain/heartbeats.ts';
import type { SchedulingLimits } from '../domain/firing-limits.ts';
import type { DeliveryPolicy } from '../domain/timers.ts';

export default async function heartbeatRoutes(
  app: ServiceApp,
  { timers, limits }: { timers: { queue: Queue; policy: DeliveryPolicy }; limits: SchedulingLimits },
) {
  app.route({
    ...fastifyRoute(schedulingRoutes.getHeartbeat),
    handler: async (request) => ({
      heartbeat: await request.asUser((trx) => readHeartbeat(trx, request.query.agentId)),
    }),
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.saveHeartbeat),
    handler: async (request) => ({
      heartbeat: await request.asUser((trx) =>
        saveHeartbeat(
          trx,
          { userId: request.identity.userId!, admin: request.identity.admin },
          { timers, limits },
          request.body,
        ),
      ),
    }),
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.listHeartbeatRuns),
    handler: async (request) => {
      const { agentId, limit = 50, cursor } = request.query;
      return request.asUser((trx) => listHeartbeatRuns(trx, request.identity.userId!, agentId, { limit, cursor }));
    },
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.deleteHeartbeat),
    handler: async (request) => {
      await request.asUser((trx) =>
        removeHeartbeat(trx, request.identity.userId!, timers.queue, request.query.agentId),
      );
      return { success: true as const };
    },
  });
}
