import { hashToken } from '@agentyard/crypto';
import { sql, type AppDb, type UserTx } from '@agentyard/db';
import { AuthErrors } from '../errors.ts';

/** Users made by wallet sign-in get this derived email (`<address>@wallet.<service>`); nobody else may. */
export const WALLET_EMAIL_DOMAIN = '@wallet.agentyard';

export const isWalletEmail = (email: string) => email.trim().toLowerCase().endsWith(WALLET_EMAIL_DOMAIN);

/**
 * Files a verification link for the user's address and returns its id for the mail queue; the
 * user's earlier links stop working. The token is born in the mail worker: it never sits in a
 * request, a job or a log.
 */
export async function fileEmailVerification(trx: UserTx, userId: string, email: string): Promise<string> {
  await trx
    .updateTable('email_verifications')
    .set({ used_at: new Date() })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
  const row = await trx
    .insertInto('email_verifications')
    .values({ user_id: userId, email })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A fresh link for a signed-in user whose address is not verified yet. */
export async function requestEmailVerification(
  trx: UserTx,
  userId: string,
): Promise<{ verificationId: string; email: string }> {
  const user = await trx
    .selectFrom('users')
    .select(['email', 'email_verified_at'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) throw AuthErrors.userNotFound();
  if (isWalletEmail(user.email)) throw AuthErrors.walletAccountHasNoMailbox();
  if (user.email_verified_at) throw AuthErrors.emailAlreadyVerified();
  return { verificationId: await fileEmailVerification(trx, userId, user.email), email: user.email };
}

/** Verifies the address the link was sent to: 400 for a token never issued, 410 used, superseded or expired. */
export async function verifyEmail(db: AppDb, token: string): Promise<void> {
  const { rows } = await sql<{
    outcome: 'verified' | 'spent' | 'unknown';
  }>`select auth_claim_email_verification(${hashToken(token)}) as outcome`.execute(db);
  const outcome = rows[0]?.outcome;
  if (outcome === 'spent') throw AuthErrors.spentVerificationToken();
  if (outcome !== 'verified') throw AuthErrors.invalidVerificationToken();
}
