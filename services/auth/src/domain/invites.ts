import { randomBytes } from 'node:crypto';
import { hashToken, type Keyring } from '@agentyard/crypto';
import { lockForTransaction, sql, type AppDb, type UserTx } from '@agentyard/db';
import { SignInErrors } from '../errors.ts';

export const INVITE_TTL_MS = 30 * 24 * 3600 * 1000;
const INVITE_TOKEN = /^[0-9a-f]{64}$/;
// Markup, script URLs, template and SQL syntax: nothing a person's name needs.
const INJECTION =
  /[<>{}`$\\;]|--|\/\*|\*\/|javascript:|data:|vbscript:|\bon\w+\s*=|\b(select|insert|update|delete|drop|union)\b\s/i;
const CONTROL = /\p{Cc}/u;

/** The sealing context of an invite code, so a sealed code cannot be passed off as another secret. */
export const INVITE_SEAL_CONTEXT = 'invite-code';

export function checkInviteName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || INJECTION.test(trimmed) || CONTROL.test(trimmed)) throw SignInErrors.invalidInviteName();
  return trimmed;
}

export function inviteUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/invite/${token}`;
}

/**
 * 32 random bytes as 64 hex characters; stored hashed for lookups and sealed for the admin listing.
 * Refused (429) while the creator holds `maxOutstanding` unused, unexpired invites: counted under a
 * lock per creator held to commit, so two creations at once cannot both see room for one.
 */
export async function createInvite(
  trx: UserTx,
  keyring: Keyring,
  creatorId: string,
  maxOutstanding: number,
  invitee: { name?: string; email?: string },
) {
  await lockForTransaction(trx, `invites of ${creatorId}`);
  const { n } = await trx
    .selectFrom('invites')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirstOrThrow();
  if (Number(n) >= maxOutstanding) throw SignInErrors.inviteLimit(maxOutstanding);
  const token = randomBytes(32).toString('hex');
  await trx
    .insertInto('invites')
    .values({
      user_id: creatorId,
      name: invitee.name ?? null,
      email: invitee.email ?? null,
      token_hash: hashToken(token),
      token_sealed: keyring.encrypt(token, INVITE_SEAL_CONTEXT),
      expires_at: new Date(Date.now() + INVITE_TTL_MS),
    })
    .execute();
  return token;
}

/** The lookup hash of an invite token; 400 when it is not 64 hex characters. */
export function inviteTokenHash(token: string): string {
  const normalized = token.trim().toLowerCase();
  if (!INVITE_TOKEN.test(normalized)) throw SignInErrors.invalidInviteToken();
  return hashToken(normalized);
}

/** 400 bad format, 404 missing or expired, 410 used; else the invite is good. */
export async function verifyInvite(db: AppDb, token: string): Promise<void> {
  const { rows } = await sql<{
    expires_at: Date;
    used_at: Date | null;
  }>`select expires_at, used_at from auth_invite_status(${inviteTokenHash(token)})`.execute(db);
  const invite = rows[0];
  if (!invite) throw SignInErrors.inviteNotFound();
  if (invite.used_at) throw SignInErrors.inviteUsed();
  if (invite.expires_at.getTime() <= Date.now()) throw SignInErrors.inviteNotFound();
}

/**
 * Uses up an invite (by its `inviteTokenHash`) for the user of `trx`'s row-level context, in that
 * transaction (so it is undone with it): 404 missing or expired, 410 used, also when a concurrent caller won it.
 */
export async function consumeInvite(trx: UserTx, tokenHash: string): Promise<void> {
  const { rows } = await sql<{
    outcome: 'consumed' | 'used' | 'missing';
  }>`select auth_consume_invite(${tokenHash}) as outcome`.execute(trx);
  const outcome = rows[0]?.outcome;
  if (outcome === 'used') throw SignInErrors.inviteUsed();
  if (outcome !== 'consumed') throw SignInErrors.inviteNotFound();
}
