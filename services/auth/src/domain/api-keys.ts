import { hashToken, randomToken } from '@agentyard/crypto';
import { sql, type AppDb, type UserTx } from '@agentyard/db';

export const API_KEY_PREFIX = 'sk_';
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;

/** A new key for the user: the secret is returned this once, only its hash is stored. */
export async function createApiKey(trx: UserTx, userId: string, name: string | undefined) {
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  const row = await trx.insertInto('api_keys')
    .values({ user_id: userId, name: name?.trim() || 'API key', key_hash: hashToken(key), prefix: key.slice(0, SHOWN_PREFIX_LENGTH) })
    .returning(['id', 'name', 'prefix', 'created_at'])
    .executeTakeFirstOrThrow();
  return { id: row.id, name: row.name, prefix: row.prefix, createdAt: row.created_at.toISOString(), key };
}

export async function listApiKeys(trx: UserTx) {
  const rows = await trx.selectFrom('api_keys').select(['id', 'name', 'prefix', 'created_at']).orderBy('created_at', 'desc').execute();
  return rows.map((row) => ({ id: row.id, name: row.name, prefix: row.prefix, createdAt: row.created_at.toISOString() }));
}

/** True when a key of the user was deleted (row-level security hides everyone else's). */
export async function deleteApiKey(trx: UserTx, keyId: string): Promise<boolean> {
  const result = await trx.deleteFrom('api_keys').where('id', '=', keyId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Whether `key` is a live user key (looked up by its hash, one exact match). */
export async function isValidApiKey(db: AppDb, key: string): Promise<boolean> {
  if (!key.startsWith(API_KEY_PREFIX)) return false;
  const { rows } = await sql<{ key_id: string }>`select key_id from auth_api_key_identity(${hashToken(key)})`.execute(db);
  return rows.length === 1;
}
