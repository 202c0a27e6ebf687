import { hashToken, randomToken } from '@agentyard/crypto';
import { SESSION_TTL_SECONDS } from '@agentyard/identity';
import type { UserTx } from '@agentyard/db';

/** Starts a session: the token goes to the client once, only its hash is stored. */
export async function createSession(
  trx: UserTx,
  userId: string,
  client: { ip?: string; userAgent?: string },
): Promise<string> {
  const token = randomToken(32);
  await trx
    .insertInto('sessions')
    .values({
      user_id: userId,
      token_hash: hashToken(token),
      expires_at: new Date(Date.now() + SESSION_TTL_SECONDS * 1000),
      ip: client.ip ?? null,
      user_agent: client.userAgent?.slice(0, 512) ?? null,
    })
    .execute();
  return token;
}

export async function endSession(trx: UserTx, sessionId: string): Promise<void> {
  await trx.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/** Ends every session of the user but `keepSessionId` (all of them when null). */
export async function endOtherSessions(trx: UserTx, userId: string, keepSessionId: string | null): Promise<number> {
  let query = trx.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepSessionId) query = query.where('id', '!=', keepSessionId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
