import { activeStatusesOf, currentPlan } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, missionControlRoutes } from '@agentyard/proto-schemas';
import type { AiConfig } from '../config.ts';
import { fleetCosts } from '../domain/fleet-costs.ts';
import { parseAllowances } from '../domain/spending/allowance.ts';

/** Mission control's costs: the AI service owns usage, the allowance, credits and limits they come from. */
export default async function fleetCostRoutes(app: ServiceApp, { config }: { config: AiConfig }) {
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const allowances = parseAllowances(config.PLAN_MONTHLY_ALLOWANCE_USD);
  app.route({
    ...fastifyRoute(missionControlRoutes.fleetCosts),
    handler: async (request) =>
      request.asUser(async (trx) => {
        const userId = request.identity.userId!;
        const plan = await currentPlan(trx, userId, { admin: request.identity.admin, activeStatuses });
        return fleetCosts(trx, userId, { plan, allowances, gbpToUsd: config.GBP_TO_USD });
      }),
  });
}
