import { randomUUID } from 'node:crypto';
import { hashToken } from '@agentyard/crypto';
import { sql, type AppDb } from '@agentyard/db';
import { AuthErrors, SignInErrors } from '../errors.ts';
import { normalizeEmail } from './accounts.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from './passwords.ts';

/**
 * Files a reset request for an email address and returns its id for the mail queue. The same work
 * happens whether or not an account has that email (the worker finds out), so the answer and its
 * timing say nothing about who has an account, and the reset token is born in the worker: it never
 * sits in a request, a job or a log.
 */
export async function fileResetRequest(db: AppDb, email: string): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('password_reset_requests')
    .values({ id, email: normalizeEmail(email).slice(0, 320) })
    .execute();
  return id;
}

/**
 * Sets the password of the token's user (token single use, unexpired) and ends all their sessions
 * and every other reset link. The link came to the account's address, so the address is verified
 * now; when it was not before, whoever made the account never proved it, so its API keys go too.
 */
export async function resetPassword(
  db: AppDb,
  token: string,
  password: string,
): Promise<{ userId: string; email: string }> {
  if ([...password].length < MIN_PASSWORD_LENGTH) throw AuthErrors.shortPassword();
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{
      user_id: string | null;
    }>`select auth_claim_password_reset(${hashToken(token)}) as user_id`.execute(trx);
    const userId = rows[0]?.user_id;
    if (!userId) throw SignInErrors.invalidResetToken();
    await sql`select set_config('app.user_id', ${userId}, true)`.execute(trx);
    const before = await trx
      .selectFrom('users')
      .select(['email', 'email_verified_at'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('users')
      .set({
        password_hash: passwordHash,
        email_verified_at: before.email_verified_at ?? new Date(),
        updated_at: sql`now()` as unknown as Date,
      })
      .where('id', '=', userId)
      .execute();
    await trx.deleteFrom('sessions').where('user_id', '=', userId).execute();
    await trx
      .updateTable('password_resets')
      .set({ used_at: new Date() })
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .execute();
    if (!before.email_verified_at) await trx.deleteFrom('api_keys').where('user_id', '=', userId).execute();
    return { userId, email: before.email };
  });
}
