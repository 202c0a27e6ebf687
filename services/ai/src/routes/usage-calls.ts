import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import { usageCalls } from '../domain/usage-calls.ts';

/** The owner's own AI calls with their attempts, read in their row-level-security transaction. */
export default async function usageCallRoutes(app: ServiceApp) {
  app.route({
    ...fastifyRoute(aiRoutes.usageCalls),
    handler: async (request) => {
      const { limit = 50, cursor, ...filters } = request.query;
      return request.asUserStatement((trx) => usageCalls(trx, filters, { limit, cursor }));
    },
  });
}
