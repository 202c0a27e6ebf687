import { activeStatusesOf, currentPlan } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import type { AiConfig } from '../config.ts';
import { costDashboard } from '../domain/cost-dashboard.ts';

export default async function costDashboardRoutes(app: ServiceApp, { config }: { config: AiConfig }) {
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  app.route({
    ...fastifyRoute(aiRoutes.costDashboard),
    handler: async (request) =>
      request.asUser(async (trx) => {
        const plan = await currentPlan(trx, request.identity.userId!, {
          admin: request.identity.admin,
          activeStatuses,
        });
        return costDashboard(trx, request.query.period ?? '7d', config.GBP_TO_USD, plan);
      }),
  });
}
