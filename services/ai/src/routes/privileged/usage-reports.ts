import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import type { SystemDb } from '@agentyard/db/system';
import {
  usageByModel,
  usageByTool,
  usageDaily,
  usageSummary,
  type UsageScope,
} from '../../domain/privileged/usage-reports.ts';

/** A backend caller sees the usage of the user it names in `x-user-id`, or the whole platform's when it names none; a web caller their own. */
function scopeOf(request: FastifyRequest, days: number | undefined, agentId: string | undefined): UsageScope {
  return { days: days ?? 30, userRef: request.identity.userId, agentId: agentId ?? null };
}

/** The `/api/usage/*` family, from the daily aggregate: backend callers, and the summary for a signed-in user. */
export default async function usageReportRoutes(app: ServiceApp, { system }: { system: SystemDb }) {
  app.route({
    ...fastifyRoute(aiRoutes.usageSummary),
    handler: async (request) => {
      const scope = scopeOf(request, request.query.days, request.query.agentId);
      // A web caller reads their own rows in their row-level-security transaction.
      const usage =
        request.identity.surface === 'web'
          ? await request.asUserStatement((trx) => usageSummary(trx, scope))
          : await usageSummary(system, scope);
      return { days: scope.days, agentId: scope.agentId, usage };
    },
  });
  app.route({
    ...fastifyRoute(aiRoutes.usageByAgent),
    handler: async (request) => {
      const scope = scopeOf(request, request.query.days, request.params.agentId);
      const [usage, models] = await Promise.all([usageSummary(system, scope), usageByModel(system, scope)]);
      return { days: scope.days, agentId: scope.agentId, usage, models };
    },
  });
  app.route({
    ...fastifyRoute(aiRoutes.usageByModel),
    handler: async (request) => {
      const scope = scopeOf(request, request.query.days, request.query.agentId);
      return { days: scope.days, agentId: scope.agentId, models: await usageByModel(system, scope) };
    },
  });
  app.route({
    ...fastifyRoute(aiRoutes.usageDaily),
    handler: async (request) => {
      const scope = scopeOf(request, request.query.days, request.query.agentId);
      return { days: scope.days, agentId: scope.agentId, daily: await usageDaily(system, scope) };
    },
  });
  app.route({
    ...fastifyRoute(aiRoutes.usageTools),
    handler: async (request) => {
      const { days, agentId, limit = 50, cursor } = request.query;
      const scope = scopeOf(request, days, agentId);
      return { days: scope.days, agentId: scope.agentId, ...(await usageByTool(system, scope, { limit, cursor })) };
    },
  });
}
