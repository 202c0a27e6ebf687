// The outbound-email worker's side: reads requests and suppressions across users (system connection).
import { hashToken, randomToken } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { Mailer } from '../mailer.ts';

export interface PasswordResetMailJob {
  kind: 'password-reset';
  requestId: string;
}
export interface EmailVerificationMailJob {
  kind: 'email-verification';
  verificationId: string;
}
export type EmailJob = PasswordResetMailJob | EmailVerificationMailJob;

export async function isSuppressed(db: SystemDb, address: string): Promise<boolean> {
  const row = await db
    .selectFrom('email_suppressions')
    .select('address')
    .where('address', '=', address.trim().toLowerCase())
    .executeTakeFirst();
  return !!row;
}

export function resetLink(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/reset-password?token=${encodeURIComponent(token)}`;
}

/**
 * Handles one reset request: when an account has the address (and mail to it is not suppressed),
 * makes a fresh token, stores its hash (replacing one an earlier attempt of this request stored, so
 * a retry never leaves two live links) and mails the link. The request is deleted once handled.
 */
export async function sendPasswordResetMail(
  db: SystemDb,
  mailer: Mailer,
  settings: { publicBaseUrl: string; ttlSeconds: number },
  requestId: string,
): Promise<string> {
  const request = await db
    .selectFrom('password_reset_requests')
    .select(['id', 'email'])
    .where('id', '=', requestId)
    .executeTakeFirst();
  if (!request) return 'already handled';
  const user = await db
    .selectFrom('users')
    .select(['id', 'email'])
    .where(sql<boolean>`lower(email) = lower(${request.email})`)
    .executeTakeFirst();
  let outcome = 'no account';
  if (user && (await isSuppressed(db, user.email))) outcome = 'suppressed';
  else if (user) {
    const token = randomToken(32);
    await db
      .insertInto('password_resets')
      .values({
        user_id: user.id,
        request_id: request.id,
        token_hash: hashToken(token),
        expires_at: new Date(Date.now() + settings.ttlSeconds * 1000),
      })
      .onConflict((oc) =>
        oc
          .column('request_id')
          .doUpdateSet({ token_hash: hashToken(token), expires_at: new Date(Date.now() + settings.ttlSeconds * 1000) })
          .where('password_resets.used_at', 'is', null),
      )
      .execute();
    const link = resetLink(settings.publicBaseUrl, token);
    await mailer.send({
      to: user.email,
      subject: 'Reset your Agentyard password',
      text: `Someone asked to reset the password of your Agentyard account.\n\nTo choose a new password, open this link within ${Math.round(settings.ttlSeconds / 60)} minutes:\n${link}\n\nIf it was not you, ignore this mail; your password stays as it is.\n`,
    });
    outcome = 'sent';
  }
  await db.deleteFrom('password_reset_requests').where('id', '=', request.id).execute();
  return outcome;
}

export function verificationLink(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/verify-email?token=${encodeURIComponent(token)}`;
}

/**
 * Mails one verification link: a fresh token whose hash replaces whatever an earlier attempt of this
 * job stored (a retry never leaves two live links). A link that was used or superseded meanwhile,
 * or an address no longer the account's, gets no mail.
 */
export async function sendEmailVerificationMail(
  db: SystemDb,
  mailer: Mailer,
  settings: { publicBaseUrl: string; ttlSeconds: number },
  verificationId: string,
): Promise<string> {
  const token = randomToken(32);
  const expiresAt = new Date(Date.now() + settings.ttlSeconds * 1000);
  const link = await db
    .updateTable('email_verifications')
    .set({ token_hash: hashToken(token), expires_at: expiresAt })
    .where('id', '=', verificationId)
    .where('used_at', 'is', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('users')
          .select('id')
          .whereRef('users.id', '=', 'email_verifications.user_id')
          .where(sql<boolean>`lower(users.email) = lower(email_verifications.email)`),
      ),
    )
    .returning(['email'])
    .executeTakeFirst();
  if (!link) return 'superseded';
  if (await isSuppressed(db, link.email)) return 'suppressed';
  await mailer.send({
    to: link.email,
    subject: 'Verify your Agentyard email address',
    text: `Welcome to Agentyard.\n\nTo confirm that this address is yours, open this link within ${Math.round(settings.ttlSeconds / 3600)} hours:\n${verificationLink(settings.publicBaseUrl, token)}\n\nIf you did not create an account, ignore this mail: nobody can sign in to other services as you with it.\n`,
  });
  return 'sent';
}

/**
 * Tells an agent's owner that it kept exiting and is no longer restarted (the agents worker's crash
 * loop event), with a link to its page (the Repair button). An event gone (the agent was deleted)
 * or an address whose mail is suppressed gets none.
 */
export async function sendAgentCrashLoopMail(
  db: SystemDb,
  mailer: Mailer,
  settings: { publicBaseUrl: string },
  eventId: string,
): Promise<string> {
  const event = await db
    .selectFrom('agent_events')
    .innerJoin('agents', 'agents.id', 'agent_events.agent_id')
    .innerJoin('users', 'users.id', 'agent_events.user_id')
    .select([
      'agents.id as agentId',
      'agents.name as name',
      'users.email as email',
      'agent_events.detail as detail',
      'agent_events.exit_code as exitCode',
      'agent_events.oom_killed as oomKilled',
    ])
    .where('agent_events.id', '=', eventId)
    .where('agent_events.kind', '=', 'crash-loop')
    .executeTakeFirst();
  if (!event) return 'no event';
  if (await isSuppressed(db, event.email)) return 'suppressed';
  const page = `${settings.publicBaseUrl.replace(/\/$/, '')}/agents/${event.agentId}`;
  const last = event.oomKilled ? 'it ran out of memory' : `its last exit code was ${event.exitCode ?? 'unknown'}`;
  await mailer.send({
    to: event.email,
    subject: `Your agent ${event.name} keeps crashing`,
    text: `Your Agentyard agent "${event.name}" exited ${event.detail ?? 'several times in a few minutes'}; ${last}.\n\nIt is no longer restarted on its own. Its recent events and output are on its page, where Repair starts it again from its saved configuration:\n${page}\n`,
  });
  return 'sent';
}
