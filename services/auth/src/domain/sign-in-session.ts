import { withUser, type AppDb } from '@agentyard/db';
import { createSession } from './sessions.ts';

/** A new session for a user who just proved who they are; the token is for the cookie only. */
export function startSession(
  db: AppDb,
  userId: string,
  client: { ip?: string; userAgent?: string | undefined },
): Promise<string> {
  return withUser(db, userId, (trx) => createSession(trx, userId, { ip: client.ip, userAgent: client.userAgent }));
}
