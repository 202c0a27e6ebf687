import type { Keyring } from '@agentyard/crypto';
import { sql, type Database, type Kysely } from '@agentyard/db';
import type { AiProvider } from '@agentyard/proto-schemas';

/** A stored key as its owner sees it: never the key, at most its last four characters. */
export interface ProviderKeyView {
  provider: AiProvider;
  hint: string;
  updatedAt: string;
}

// The user and provider are bound into the ciphertext: a sealed key copied to another row does not open.
const sealContext = (userId: string, provider: string) => `user:${userId}:provider:${provider}`;

const viewOf = (row: { provider: string; key_hint: string; updated_at: Date }): ProviderKeyView => ({
  provider: row.provider as AiProvider,
  hint: row.key_hint,
  updatedAt: new Date(row.updated_at).toISOString(),
});

/** The user's own provider keys, by provider (RLS: only theirs). */
export async function providerKeys(db: Kysely<Database>): Promise<ProviderKeyView[]> {
  const rows = await db
    .selectFrom('provider_keys')
    .select(['provider', 'key_hint', 'updated_at'])
    .orderBy('provider')
    .execute();
  return rows.map(viewOf);
}

/** Seals and stores (or replaces) the user's key for a provider. */
export async function storeProviderKey(
  db: Kysely<Database>,
  keyring: Keyring,
  userId: string,
  provider: AiProvider,
  apiKey: string,
): Promise<ProviderKeyView> {
  const sealed = keyring.encrypt(apiKey, sealContext(userId, provider));
  const hint = apiKey.slice(-4);
  const row = await db
    .insertInto('provider_keys')
    .values({ user_id: userId, provider, key_sealed: sealed, key_hint: hint })
    .onConflict((c) =>
      c
        .columns(['user_id', 'provider'])
        .doUpdateSet({ key_sealed: sealed, key_hint: hint, updated_at: sql<Date>`now()` }),
    )
    .returning(['provider', 'key_hint', 'updated_at'])
    .executeTakeFirstOrThrow();
  return viewOf(row);
}

/** Removes the user's key for a provider: false when there was none. */
export async function removeProviderKey(db: Kysely<Database>, provider: AiProvider): Promise<boolean> {
  const removed = await db.deleteFrom('provider_keys').where('provider', '=', provider).executeTakeFirst();
  return Number(removed.numDeletedRows) > 0;
}

/** Opens a sealed key read by the gateway (privileged/provider-keys.ts) for one call. */
export const openProviderKey = (keyring: Keyring, userId: string, provider: string, sealed: string): string =>
  keyring.decrypt(sealed, sealContext(userId, provider));
