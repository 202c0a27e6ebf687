import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import type { AiConfig } from '../config.ts';
import { costDashboard } from '../domain/cost-dashboard.ts';

export default async function costDashboardRoutes(app: ServiceApp, { config }: { config: AiConfig }) {
  app.route({
    ...fastifyRoute(aiRoutes.costDashboard),
    handler: async (request) => request.asUser((trx) => costDashboard(trx, request.query.period ?? '7d', config.GBP_TO_USD)),
  });
}
