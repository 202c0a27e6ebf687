import type { SystemDb } from '@agentyard/db/system';

/** A user's sealed provider keys by provider (the gateway opens one per call), read across users. */
export async function sealedProviderKeys(db: SystemDb, userId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('provider_keys')
    .select(['provider', 'key_sealed'])
    .where('user_id', '=', userId)
    .execute();
  return new Map(rows.map((r) => [r.provider, r.key_sealed]));
}
