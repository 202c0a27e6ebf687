import { isUniqueViolation, sql, type AppDb, type UserTx } from '@agentyard/db';
import { withUser } from '@agentyard/db';
import { randomUUID } from 'node:crypto';
import { isAdminEmail } from '@agentyard/identity';
import { AuthErrors, SignInErrors } from '../errors.ts';
import { fileEmailVerification, isWalletEmail } from './email-verification.ts';
import { consumeInvite, inviteTokenHash } from './invites.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';

// Deliberately simple: one @, no spaces, a dot in the domain. Deliverability is the mail's job.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const REFERRAL_CODE = /^[A-Za-z0-9-]{1,20}$/;

export interface NewAccount {
  email: string;
  password: string;
  name?: string | undefined;
  referralCode?: string | undefined;
  inviteToken?: string | undefined;
}

export function isValidEmail(email: string): boolean {
  const trimmed = email.trim();
  return EMAIL.test(trimmed) && trimmed.length <= 254;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Checks a sign-up, in the order the client can fix it; throws the first problem. */
export function validateNewAccount(input: NewAccount): void {
  if (!isValidEmail(input.email)) throw AuthErrors.invalidEmail();
  // Wallet sign-in owns these addresses: registering one would wait for its wallet to link into it.
  if (isWalletEmail(input.email)) throw AuthErrors.reservedEmailDomain();
  if ([...input.password].length < MIN_PASSWORD_LENGTH) throw AuthErrors.shortPassword();
  if (input.referralCode !== undefined && !REFERRAL_CODE.test(input.referralCode))
    throw AuthErrors.invalidReferralCode();
}

/**
 * Creates the user (its own row-level context, since the id is new), unverified, with a
 * verification link to mail (`verificationId`); 409 when the email is taken. An invite, given or
 * required, is used up in the same transaction: no user without it, no invite used by a
 * registration that failed.
 */
export async function registerUser(db: AppDb, input: NewAccount, policy: { inviteRequired: boolean }) {
  validateNewAccount(input);
  if (input.inviteToken === undefined && policy.inviteRequired) throw SignInErrors.inviteRequired();
  const inviteHash = input.inviteToken === undefined ? undefined : inviteTokenHash(input.inviteToken);
  const email = normalizeEmail(input.email);
  const name = input.name?.trim() || email;
  const passwordHash = await hashPassword(input.password);
  const id = randomUUID();
  try {
    return await withUser(db, id, async (trx) => {
      if (inviteHash !== undefined) await consumeInvite(trx, inviteHash);
      const user = await trx
        .insertInto('users')
        .values({
          id,
          email,
          name,
          password_hash: passwordHash,
          referral_code: input.referralCode?.toUpperCase() ?? null,
        })
        .returning(['id', 'email', 'name'])
        .executeTakeFirstOrThrow();
      return { user: { ...user, emailVerified: false }, verificationId: await fileEmailVerification(trx, id, email) };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw AuthErrors.userExists();
    throw error;
  }
}

/** The user a correct email and password belong to, else null (same work either way). */
export async function authenticate(
  db: AppDb,
  email: string,
  password: string,
): Promise<{ id: string; name: string } | null> {
  const { rows } = await sql<{
    user_id: string;
    name: string;
    password_hash: string | null;
  }>`select * from auth_login_candidate(${normalizeEmail(email)})`.execute(db);
  const candidate = rows[0];
  const ok = await verifyPassword(candidate?.password_hash ?? null, password);
  return ok && candidate ? { id: candidate.user_id, name: candidate.name } : null;
}

export async function getUser(trx: UserTx, userId: string) {
  return trx
    .selectFrom('users')
    .select(['id', 'email', 'name', 'created_at', 'password_hash', 'email_verified_at'])
    .where('id', '=', userId)
    .executeTakeFirst();
}

export async function renameUser(trx: UserTx, userId: string, name: string) {
  return trx
    .updateTable('users')
    .set({ name: name.trim(), updated_at: sql`now()` as unknown as Date })
    .where('id', '=', userId)
    .returning(['id', 'email', 'name', 'created_at', 'password_hash', 'email_verified_at'])
    .executeTakeFirst();
}

/** Admin by the list (ADMIN_EMAILS), and, where `needsVerifiedEmail`, only with a verified address. */
export function isAdminUser(
  user: { email: string; email_verified_at: Date | null },
  admins: ReadonlySet<string>,
  needsVerifiedEmail: boolean,
): boolean {
  return isAdminEmail(user.email, admins) && (user.email_verified_at !== null || !needsVerifiedEmail);
}

/** A new password long enough to be set (400 otherwise), judged before any password is checked. */
export function checkNewPassword(newPassword: string): void {
  if ([...newPassword].length < MIN_PASSWORD_LENGTH) throw AuthErrors.shortPassword();
}

/** Checks the current password, stores the new one; the caller ends the other sessions. */
export async function changePassword(
  trx: UserTx,
  userId: string,
  currentPassword: string,
  newPassword: string,
): Promise<void> {
  checkNewPassword(newPassword);
  const user = await getUser(trx, userId);
  if (!user) throw AuthErrors.userNotFound();
  if (!(await verifyPassword(user.password_hash, currentPassword))) throw AuthErrors.wrongCurrentPassword();
  await trx
    .updateTable('users')
    .set({ password_hash: await hashPassword(newPassword), updated_at: sql`now()` as unknown as Date })
    .where('id', '=', userId)
    .execute();
}
