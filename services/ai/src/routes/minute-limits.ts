import type { ServiceApp } from '@agentyard/http';
import { currentPlan, type Database, type Kysely } from '@agentyard/db';
import { fastifyRoute, keyRoutes, spendingRoutes } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import { agentMinuteLimits, setAgentMinuteLimits } from '../domain/limits/agent-minute-limits.ts';
import { keyMinuteLimits, setKeyMinuteLimits } from '../domain/limits/key-minute-limits.ts';
import { accessForPlan } from '../domain/plan-access.ts';

/**
 * An agent's, and a user API key's, AI requests and tokens per minute, set by the owner within the
 * plan's caps. Served here, not by the agents or auth service: the gateway enforces them and owns
 * the tables (the agent's or key's row is only checked, under RLS, to be the owner's). 402 without
 * a plan: the caps are the plan's.
 */
export default async function minuteLimitRoutes(app: ServiceApp, { activeStatuses }: { activeStatuses: readonly string[] }) {
  // The plan now, read in the owner's own transaction (RLS shows their subscriptions).
  const planOf = async (db: Kysely<Database>, userId: string, admin: boolean) => accessForPlan(await currentPlan(db, userId, { admin, activeStatuses })).plan;

  app.route({
    ...fastifyRoute(spendingRoutes.getAgentMinuteLimits),
    handler: async (request) => {
      const { userId, admin } = request.identity;
      const limits = await request.asUser(async (trx) => agentMinuteLimits(trx, request.params.id, await planOf(trx, userId!, admin)));
      if (!limits) throw AiErrors.unknownAgent(request.params.id);
      return limits;
    },
  });

  app.route({
    ...fastifyRoute(spendingRoutes.putAgentMinuteLimits),
    handler: async (request) => {
      const { userId, admin } = request.identity;
      const errors = { unknownAgent: AiErrors.unknownAgent, beyondCap: AiErrors.minuteLimitBeyondCap };
      // The gateway's processes hear of the change from the database (the agent's cache notice).
      return request.asUser(async (trx) => setAgentMinuteLimits(trx, userId!, request.params.id, await planOf(trx, userId!, admin), request.body, errors));
    },
  });

  app.route({
    ...fastifyRoute(keyRoutes.getKeyMinuteLimits),
    handler: async (request) => {
      const { userId, admin } = request.identity;
      const limits = await request.asUser(async (trx) => keyMinuteLimits(trx, request.params.id, await planOf(trx, userId!, admin)));
      if (!limits) throw AiErrors.unknownKey(request.params.id);
      return limits;
    },
  });

  app.route({
    ...fastifyRoute(keyRoutes.putKeyMinuteLimits),
    handler: async (request) => {
      const { userId, admin } = request.identity;
      const errors = { unknownKey: AiErrors.unknownKey, beyondCap: AiErrors.minuteLimitBeyondCap };
      // The gateway's processes hear of the change from the database (the key's cache notice).
      return request.asUser(async (trx) => setKeyMinuteLimits(trx, userId!, request.params.id, await planOf(trx, userId!, admin), request.body, errors));
    },
  });
}
