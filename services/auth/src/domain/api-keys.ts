import { hashToken, randomToken } from '@agentyard/crypto';
import {
  decodeCursor,
  lockForTransaction,
  pageOf,
  pastPosition,
  positionAt,
  sql,
  type AppDb,
  type UserTx,
} from '@agentyard/db';
import { SignInErrors } from '../errors.ts';

export const API_KEY_PREFIX = 'sk_';
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;

/**
 * A new key for the user: the secret is returned this once, only its hash is stored. Refused (429)
 * once the user holds `maxPerUser`: counted under a lock per user held to commit, so two creations
 * at once cannot both see room for one.
 */
export async function createApiKey(trx: UserTx, userId: string, maxPerUser: number, name: string | undefined) {
  await lockForTransaction(trx, `api-keys of ${userId}`);
  const { n } = await trx
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  if (Number(n) >= maxPerUser) throw SignInErrors.apiKeyLimit(maxPerUser);
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  const row = await trx
    .insertInto('api_keys')
    .values({
      user_id: userId,
      name: name?.trim() || 'API key',
      key_hash: hashToken(key),
      prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
    })
    .returning(['id', 'name', 'prefix', 'created_at'])
    .executeTakeFirstOrThrow();
  return { id: row.id, name: row.name, prefix: row.prefix, createdAt: row.created_at.toISOString(), key };
}

/** One page of the user's keys, newest first: (created_at, id) descending. */
export async function listApiKeys(trx: UserTx, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'uuid');
  if (page.cursor !== undefined && !after) throw SignInErrors.invalidCursor();
  // With each key's own AI limits per minute (the AI gateway's table, set at PUT /api/keys/:id/limits).
  let query = trx
    .selectFrom('api_keys')
    .leftJoin('api_key_minute_limits as limits', 'limits.key_id', 'api_keys.id')
    .select([
      'api_keys.id',
      'api_keys.name',
      'api_keys.prefix',
      'api_keys.created_at',
      positionAt('api_keys.created_at').as('page_at'),
      'limits.requests_per_minute',
      'limits.tokens_per_minute',
    ]);
  if (after) query = query.where(pastPosition('api_keys.created_at', 'api_keys.id', after, 'desc', 'uuid'));
  const rows = await query
    .orderBy('api_keys.created_at', 'desc')
    .orderBy('api_keys.id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const { rows: keys, nextCursor } = pageOf(rows, page.limit, (row) => ({ at: row.page_at, id: row.id }));
  return {
    keys: keys.map((row) => ({
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      createdAt: row.created_at.toISOString(),
      requestsPerMinute: row.requests_per_minute ?? null,
      tokensPerMinute: row.tokens_per_minute ?? null,
    })),
    nextCursor,
  };
}

/** True when a key of the user was deleted (row-level security hides everyone else's). */
export async function deleteApiKey(trx: UserTx, keyId: string): Promise<boolean> {
  const result = await trx.deleteFrom('api_keys').where('id', '=', keyId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Whether `key` is a live user key (looked up by its hash, one exact match). */
export async function isValidApiKey(db: AppDb, key: string): Promise<boolean> {
  if (!key.startsWith(API_KEY_PREFIX)) return false;
  const { rows } = await sql<{ key_id: string }>`select key_id from auth_api_key_identity(${hashToken(key)})`.execute(
    db,
  );
  return rows.length === 1;
}
