import { fastifyRoute, schedulingRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { Queue } from '@agentyard/queue';
import { readHeartbeat, removeHeartbeat, saveHeartbeat } from '../domain/heartbeats.ts';
import type { SchedulingLimits } from '../domain/firing-limits.ts';
import type { DeliveryPolicy } from '../domain/timers.ts';
import { SchedulerErrors } from '../errors.ts';
import { isMissing, violationMessages } from './validation-messages.ts';

const heartbeatMessages = violationMessages((v) => {
  if (isMissing(v, 'agentId') || v.instancePath === '/agentId') return SchedulerErrors.agentIdRequired();
  if (v.instancePath === '/frequency') return SchedulerErrors.invalidFrequency();
  return undefined;
});

export default async function heartbeatRoutes(app: ServiceApp, { timers, limits }: { timers: { queue: Queue; policy: DeliveryPolicy }; limits: SchedulingLimits }) {
  app.route({
    ...fastifyRoute(schedulingRoutes.getHeartbeat),
    errorHandler: heartbeatMessages,
    handler: async (request) => ({ heartbeat: await request.asUser((trx) => readHeartbeat(trx, request.query.agentId)) }),
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.saveHeartbeat),
    errorHandler: heartbeatMessages,
    handler: async (request) => ({ heartbeat: await request.asUser((trx) => saveHeartbeat(trx, { userId: request.identity.userId!, admin: request.identity.admin }, { timers, limits }, request.body)) }),
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.deleteHeartbeat),
    errorHandler: heartbeatMessages,
    handler: async (request) => {
      await request.asUser((trx) => removeHeartbeat(trx, request.identity.userId!, timers.queue, request.query.agentId));
      return { success: true as const };
    },
  });
}
