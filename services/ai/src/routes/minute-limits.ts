import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '@agentyard/http';
import { currentPlan, type Database, type Kysely } from '@agentyard/db';
import { fastifyRoute, keyRoutes, spendingRoutes } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import {
  LIMITED_AGENTS,
  LIMITED_KEYS,
  ownMinuteLimits,
  setMinuteLimits,
  type LimitedCaller,
  type MinuteLimits,
} from '../domain/limits/minute-limits.ts';
import { accessForPlan } from '../domain/plan-access.ts';

/** A request for one caller's limits, as both routes' schemas type it. */
type LimitsRequest = Pick<FastifyRequest, 'identity' | 'asUser'> & { params: { id: string } };

/**
 * An agent's, and a user API key's, AI requests and tokens per minute, set by the owner within the
 * plan's caps. Served here, not by the agents or auth service: the gateway enforces them and owns
 * the tables (the agent's or key's row is only checked, under RLS, to be the owner's). 402 without
 * a plan: the caps are the plan's.
 */
export default async function minuteLimitRoutes(
  app: ServiceApp,
  { activeStatuses }: { activeStatuses: readonly string[] },
) {
  // The plan now, read in the owner's own transaction (RLS shows their subscriptions).
  const planOf = async (db: Kysely<Database>, userId: string, admin: boolean) =>
    accessForPlan(await currentPlan(db, userId, { admin, activeStatuses })).plan;

  /** The GET and PUT handlers of one kind of caller's limits; `unknown` answers for one that is not the owner's. */
  const limitHandlers = <IdField extends string>(limited: LimitedCaller<IdField>, unknown: (id: string) => Error) => ({
    read: async (request: LimitsRequest) => {
      const { userId, admin } = request.identity;
      const limits = await request.asUser(async (trx) =>
        ownMinuteLimits(trx, limited, request.params.id, await planOf(trx, userId!, admin)),
      );
      if (!limits) throw unknown(request.params.id);
      return limits;
    },
    // The gateway's processes hear of the change from the database (the agent's or key's cache notice).
    set: async (request: LimitsRequest & { body: MinuteLimits }) => {
      const { userId, admin } = request.identity;
      const errors = { unknown, beyondCap: AiErrors.minuteLimitBeyondCap };
      return request.asUser(async (trx) =>
        setMinuteLimits(
          trx,
          limited,
          userId!,
          request.params.id,
          await planOf(trx, userId!, admin),
          request.body,
          errors,
        ),
      );
    },
  });

  const agents = limitHandlers(LIMITED_AGENTS, AiErrors.unknownAgent);
  app.route({ ...fastifyRoute(spendingRoutes.getAgentMinuteLimits), handler: agents.read });
  app.route({ ...fastifyRoute(spendingRoutes.putAgentMinuteLimits), handler: agents.set });
  const keys = limitHandlers(LIMITED_KEYS, AiErrors.unknownKey);
  app.route({ ...fastifyRoute(keyRoutes.getKeyMinuteLimits), handler: keys.read });
  app.route({ ...fastifyRoute(keyRoutes.putKeyMinuteLimits), handler: keys.set });
}
