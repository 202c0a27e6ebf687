import { sql, type Database, type Kysely, type Transaction } from '@agentyard/db';
import { PLAN_MINUTE_CAPS, type Plan } from '@agentyard/proto-schemas';

export interface MinuteLimits {
  /** null: none beyond the plan's cap. */
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
}

export interface AgentMinuteLimits extends MinuteLimits {
  agentId: string;
  caps: { requestsPerMinute: number; tokensPerMinute: number };
}

/** How a refusal to set limits is thrown: HTTP errors of the route's own catalogue. */
export interface MinuteLimitErrors {
  beyondCap: (field: keyof MinuteLimits, cap: number, plan: Plan) => Error;
}

/** The plan's caps, once the limits asked for are known to be within them (`beyondCap` thrown otherwise). */
export function capsHolding(limits: MinuteLimits, plan: Plan, errors: MinuteLimitErrors) {
  const caps = PLAN_MINUTE_CAPS[plan];
  for (const field of ['requestsPerMinute', 'tokensPerMinute'] as const) {
    const value = limits[field];
    if (value !== null && value > caps[field]) throw errors.beyondCap(field, caps[field], plan);
  }
  return caps;
}

/** The limits that hold now: the owner's, lowered to the plan's caps (a plan changed since they were set). */
export function limitsWithinPlan(limits: MinuteLimits, plan: Plan): MinuteLimits {
  const caps = PLAN_MINUTE_CAPS[plan];
  return {
    requestsPerMinute: limits.requestsPerMinute === null ? null : Math.min(limits.requestsPerMinute, caps.requestsPerMinute),
    tokensPerMinute: limits.tokensPerMinute === null ? null : Math.min(limits.tokensPerMinute, caps.tokensPerMinute),
  };
}

/** The owner's agent's limits (RLS: undefined for an agent that is not theirs). */
export async function agentMinuteLimits(db: Kysely<Database>, agentId: string, plan: Plan): Promise<AgentMinuteLimits | undefined> {
  const row = await db
    .selectFrom('agents')
    .leftJoin('agent_minute_limits', 'agent_minute_limits.agent_id', 'agents.id')
    .select(['agents.id', 'agent_minute_limits.requests_per_minute', 'agent_minute_limits.tokens_per_minute'])
    .where('agents.id', '=', agentId)
    .executeTakeFirst();
  if (!row) return undefined;
  return { agentId: row.id, requestsPerMinute: row.requests_per_minute ?? null, tokensPerMinute: row.tokens_per_minute ?? null, caps: PLAN_MINUTE_CAPS[plan] };
}

/**
 * Sets the owner's agent's limits in the owner's transaction. `beyondCap` is thrown for a limit
 * above the plan's cap, `unknownAgent` for an agent RLS does not show; either way nothing changes.
 */
export async function setAgentMinuteLimits(
  trx: Transaction<Database>,
  userId: string,
  agentId: string,
  plan: Plan,
  limits: MinuteLimits,
  errors: MinuteLimitErrors & { unknownAgent: (agentId: string) => Error },
): Promise<AgentMinuteLimits> {
  const caps = capsHolding(limits, plan, errors);
  const owned = await trx.selectFrom('agents').select('id').where('id', '=', agentId).executeTakeFirst();
  if (!owned) throw errors.unknownAgent(agentId);
  const values = { requests_per_minute: limits.requestsPerMinute, tokens_per_minute: limits.tokensPerMinute, updated_at: sql<Date>`now()` };
  await trx
    .insertInto('agent_minute_limits')
    .values({ agent_id: agentId, user_id: userId, ...values })
    .onConflict((oc) => oc.column('agent_id').doUpdateSet(values))
    .execute();
  return { agentId, ...limits, caps };
}
