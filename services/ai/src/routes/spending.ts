import type { ServiceApp } from '@agentyard/http';
import { fastifyRoute, spendingRoutes } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import { creditBalanceUsd, creditEntriesPage } from '../domain/spending/ledger.ts';
import { setSpendingLimits, spendingLimits } from '../domain/spending/limits.ts';
import type { SpendCounters } from '../domain/spending/privileged/spend-counters.ts';

/** The credits ledger and the user's own spending limits (web, signed in). */
export default async function spendingRoutesPlugin(app: ServiceApp, { counters }: { counters: SpendCounters }) {
  app.route({
    ...fastifyRoute(spendingRoutes.credits),
    handler: async (request) =>
      request.asUser(async (trx) => {
        const userId = request.identity.userId!;
        const page = await creditEntriesPage(trx, userId, {
          limit: request.query.limit ?? 50,
          cursor: request.query.cursor,
          badCursor: AiErrors.badCursor,
        });
        return { balanceUsd: await creditBalanceUsd(trx, userId), ...page };
      }),
  });

  app.route({
    ...fastifyRoute(spendingRoutes.getLimits),
    handler: async (request) => request.asUser((trx) => spendingLimits(trx, request.identity.userId!)),
  });

  app.route({
    ...fastifyRoute(spendingRoutes.putLimits),
    handler: async (request) => {
      const userId = request.identity.userId!;
      const limits = await request.asUser((trx) => setSpendingLimits(trx, userId, request.body, AiErrors.unknownAgent));
      // Every gateway process reads the new limits on its next call; failing that, within the budget TTL.
      await counters
        .budgetChanged(userId)
        .catch((error: Error) =>
          request.log.error(
            { err: { message: error.message } },
            'spend budget not dropped from Redis: new limits count once it expires',
          ),
        );
      return limits;
    },
  });
}
