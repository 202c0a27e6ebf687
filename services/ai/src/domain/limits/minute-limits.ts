import { sql, type Database, type Kysely, type Transaction } from '@agentyard/db';
import { PLAN_MINUTE_CAPS, type Plan } from '@agentyard/proto-schemas';

export interface MinuteLimits {
  /** null: none beyond the plan's cap. */
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
}

type MinuteCaps = { requestsPerMinute: number; tokensPerMinute: number };

/**
 * What an owner limits the AI calls of: the table of its rows (RLS shows the owner only theirs),
 * the table of their limits and its column naming the row, the field the row's id has on the wire,
 * and the plan's caps on its limits.
 */
export interface LimitedCaller<IdField extends string> {
  table: 'agents' | 'api_keys';
  limitsTable: 'agent_minute_limits' | 'api_key_minute_limits';
  idColumn: 'agent_id' | 'key_id';
  idField: IdField;
  caps: Record<Plan, MinuteCaps>;
}

export const LIMITED_AGENTS = {
  table: 'agents',
  limitsTable: 'agent_minute_limits',
  idColumn: 'agent_id',
  idField: 'agentId',
  caps: PLAN_MINUTE_CAPS,
} as const satisfies LimitedCaller<'agentId'>;
export const LIMITED_KEYS = {
  table: 'api_keys',
  limitsTable: 'api_key_minute_limits',
  idColumn: 'key_id',
  idField: 'keyId',
  caps: PLAN_MINUTE_CAPS,
} as const satisfies LimitedCaller<'keyId'>;

/** A caller's limits as its owner sees them: its id, the limits set and the plan's caps on them. */
export type OwnMinuteLimits<IdField extends string> = MinuteLimits & { [field in IdField]: string } & {
  caps: MinuteCaps;
};

/** How a refusal to set limits is thrown: HTTP errors of the route's own catalogue. */
export interface MinuteLimitErrors {
  beyondCap: (field: keyof MinuteLimits, cap: number, plan: Plan) => Error;
  /** The caller's row is not one RLS shows the owner. */
  unknown: (id: string) => Error;
}

/** Throws `beyondCap` for the first limit asked for above the plan's cap on it. */
function checkWithinCaps(caps: MinuteCaps, limits: MinuteLimits, plan: Plan, errors: MinuteLimitErrors) {
  for (const field of ['requestsPerMinute', 'tokensPerMinute'] as const) {
    const value = limits[field];
    if (value !== null && value > caps[field]) throw errors.beyondCap(field, caps[field], plan);
  }
}

/** The limits that hold now: the owner's, lowered to the plan's caps (a plan changed since they were set). */
export function limitsWithinPlan(limits: MinuteLimits, plan: Plan): MinuteLimits {
  const caps = PLAN_MINUTE_CAPS[plan];
  return {
    requestsPerMinute:
      limits.requestsPerMinute === null ? null : Math.min(limits.requestsPerMinute, caps.requestsPerMinute),
    tokensPerMinute: limits.tokensPerMinute === null ? null : Math.min(limits.tokensPerMinute, caps.tokensPerMinute),
  };
}

/** The answer both routes give: the caller's id under its wire name, its limits and the plan's caps. */
const shown = <IdField extends string>(limited: LimitedCaller<IdField>, id: string, limits: MinuteLimits, plan: Plan) =>
  ({
    [limited.idField]: id,
    requestsPerMinute: limits.requestsPerMinute,
    tokensPerMinute: limits.tokensPerMinute,
    caps: limited.caps[plan],
  }) as OwnMinuteLimits<IdField>;

/** The owner's caller's limits (RLS: undefined for one that is not theirs). */
export async function ownMinuteLimits<IdField extends string>(
  db: Kysely<Database>,
  limited: LimitedCaller<IdField>,
  id: string,
  plan: Plan,
): Promise<OwnMinuteLimits<IdField> | undefined> {
  // The tables are the subject's: named by reference, as the query builder cannot type a choice of tables.
  const { rows } = await sql<{ id: string; requests_per_minute: number | null; tokens_per_minute: number | null }>`
    select owned.id, limits.requests_per_minute, limits.tokens_per_minute from ${sql.table(limited.table)} owned
    left join ${sql.table(limited.limitsTable)} limits on ${sql.ref(`limits.${limited.idColumn}`)} = owned.id
    where owned.id = ${id}`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return shown(
    limited,
    row.id,
    { requestsPerMinute: row.requests_per_minute, tokensPerMinute: row.tokens_per_minute },
    plan,
  );
}

/**
 * Sets the owner's caller's limits in the owner's transaction. `beyondCap` is thrown for a limit
 * above the plan's cap, `unknown` for a caller RLS does not show; either way nothing changes.
 */
export async function setMinuteLimits<IdField extends string>(
  trx: Transaction<Database>,
  limited: LimitedCaller<IdField>,
  userId: string,
  id: string,
  plan: Plan,
  limits: MinuteLimits,
  errors: MinuteLimitErrors,
): Promise<OwnMinuteLimits<IdField>> {
  checkWithinCaps(limited.caps[plan], limits, plan, errors);
  const owned = await sql`select 1 from ${sql.table(limited.table)} where id = ${id}`.execute(trx);
  if (owned.rows.length === 0) throw errors.unknown(id);
  const idColumn = sql.ref(limited.idColumn);
  await sql`
    insert into ${sql.table(limited.limitsTable)} (${idColumn}, user_id, requests_per_minute, tokens_per_minute, updated_at)
    values (${id}, ${userId}, ${limits.requestsPerMinute}, ${limits.tokensPerMinute}, now())
    on conflict (${idColumn}) do update
    set requests_per_minute = excluded.requests_per_minute, tokens_per_minute = excluded.tokens_per_minute, updated_at = excluded.updated_at`.execute(
    trx,
  );
  return shown(limited, id, limits, plan);
}
