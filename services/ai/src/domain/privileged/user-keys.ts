import type { SystemDb } from '@agentyard/db/system';
import type { MinuteLimits } from '../limits/minute-limits.ts';

/** The limits the owner set on a user API key's calls per minute (null: none set). */
export async function minuteLimitsOfKey(db: SystemDb, keyId: string): Promise<MinuteLimits | null> {
  const row = await db
    .selectFrom('api_key_minute_limits')
    .select(['requests_per_minute', 'tokens_per_minute'])
    .where('key_id', '=', keyId)
    .executeTakeFirst();
  if (!row || (row.requests_per_minute === null && row.tokens_per_minute === null)) return null;
  return { requestsPerMinute: row.requests_per_minute, tokensPerMinute: row.tokens_per_minute };
}
