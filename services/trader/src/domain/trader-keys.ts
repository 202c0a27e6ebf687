import type { UserTx } from '@agentyard/db';
import type { Keyring } from '@agentyard/crypto';

/** Binds a sealed key to its user, so a sealed value copied to another user's row does not decrypt. */
const keyContext = (userId: string) => `trader-key:${userId}`;

export async function hasTraderKey(trx: UserTx): Promise<boolean> {
  return !!(await trx.selectFrom('user_trader_keys').select('user_id').executeTakeFirst());
}

export async function saveTraderKey(trx: UserTx, keyring: Keyring, userId: string, apiKey: string): Promise<void> {
  const sealed = keyring.encrypt(apiKey, keyContext(userId));
  await trx
    .insertInto('user_trader_keys')
    .values({ user_id: userId, api_key_sealed: sealed })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ api_key_sealed: sealed, updated_at: new Date() }))
    .execute();
}

export async function deleteTraderKey(trx: UserTx): Promise<void> {
  await trx.deleteFrom('user_trader_keys').execute();
}

/** The user's own key, re-sealed with the current key when it was sealed with an older one (rotation). */
export async function userTraderKey(trx: UserTx, keyring: Keyring, userId: string): Promise<string | null> {
  const row = await trx.selectFrom('user_trader_keys').select('api_key_sealed').executeTakeFirst();
  if (!row) return null;
  const apiKey = keyring.decrypt(row.api_key_sealed, keyContext(userId));
  if (keyring.keyIdOf(row.api_key_sealed) !== keyring.currentKeyId) await saveTraderKey(trx, keyring, userId, apiKey);
  return apiKey;
}
