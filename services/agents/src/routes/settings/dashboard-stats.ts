import { fastifyRoute, workspaceRoutes } from '@agentyard/proto-schemas';
import { HttpError, type ServiceApp } from '@agentyard/http';
import { dashboardStats, FALLBACK_STATS } from '../../domain/settings/dashboard-stats.ts';
import { planCaller } from '../../domain/agents/plan-limits.ts';

export default async function dashboardStatsRoutes(
  app: ServiceApp,
  { activeStatuses }: { activeStatuses: readonly string[] },
) {
  app.route({
    ...fastifyRoute(workspaceRoutes.dashboardStats),
    handler: async (request) => {
      try {
        return await request.asUser((trx) => dashboardStats(trx, planCaller(request.identity, activeStatuses)));
      } catch (error) {
        if (error instanceof HttpError && error.statusCode === 404) throw error;
        // An internal failure answers zeroed values with limit 1, not an error code.
        request.log.error({ err: { message: (error as Error).message } }, 'dashboard stats failed');
        return FALLBACK_STATS;
      }
    },
  });
}
