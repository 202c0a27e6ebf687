import { sql, type Database, type Kysely, type Transaction } from '@agentyard/db';
import { PLAN_MINUTE_CAPS, type Plan } from '@agentyard/proto-schemas';
import { capsHolding, type MinuteLimitErrors, type MinuteLimits } from './agent-minute-limits.ts';

export interface KeyMinuteLimits extends MinuteLimits {
  keyId: string;
  caps: { requestsPerMinute: number; tokensPerMinute: number };
}

/** The owner's API key's limits (RLS: undefined for a key that is not theirs). */
export async function keyMinuteLimits(db: Kysely<Database>, keyId: string, plan: Plan): Promise<KeyMinuteLimits | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .leftJoin('api_key_minute_limits', 'api_key_minute_limits.key_id', 'api_keys.id')
    .select(['api_keys.id', 'api_key_minute_limits.requests_per_minute', 'api_key_minute_limits.tokens_per_minute'])
    .where('api_keys.id', '=', keyId)
    .executeTakeFirst();
  if (!row) return undefined;
  return { keyId: row.id, requestsPerMinute: row.requests_per_minute ?? null, tokensPerMinute: row.tokens_per_minute ?? null, caps: PLAN_MINUTE_CAPS[plan] };
}

/**
 * Sets the owner's API key's limits in the owner's transaction, as an agent's are: `beyondCap` for
 * a limit above the plan's cap, `unknownKey` for a key RLS does not show; either way nothing changes.
 */
export async function setKeyMinuteLimits(
  trx: Transaction<Database>,
  userId: string,
  keyId: string,
  plan: Plan,
  limits: MinuteLimits,
  errors: MinuteLimitErrors & { unknownKey: (keyId: string) => Error },
): Promise<KeyMinuteLimits> {
  const caps = capsHolding(limits, plan, errors);
  const owned = await trx.selectFrom('api_keys').select('id').where('id', '=', keyId).executeTakeFirst();
  if (!owned) throw errors.unknownKey(keyId);
  const values = { requests_per_minute: limits.requestsPerMinute, tokens_per_minute: limits.tokensPerMinute, updated_at: sql<Date>`now()` };
  await trx
    .insertInto('api_key_minute_limits')
    .values({ key_id: keyId, user_id: userId, ...values })
    .onConflict((oc) => oc.column('key_id').doUpdateSet(values))
    .execute();
  return { keyId, ...limits, caps };
}
