// Email-provider webhooks are platform-level (any user's address): stored through the system connection.
import { createHmac } from 'node:crypto';
import { safeEqual } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import { SignInErrors } from '../../errors.ts';

/** Svix's replay window: a signature older or newer than this is refused. */
const TOLERANCE_SECONDS = 5 * 60;
/** Events after which mail to the address stops. */
const SUPPRESSING = new Set(['email.bounced', 'email.complained']);

/**
 * Svix webhook signatures, as Resend sends them: `svix-id`, `svix-timestamp` (unix seconds) and
 * `svix-signature` (space-separated `v1,<base64 HMAC-SHA256>` entries) over `{id}.{timestamp}.{body}`,
 * keyed with the base64 part of the `whsec_...` secret.
 */
export function verifySvixSignature(
  secret: string,
  headers: { id?: string; timestamp?: string; signature?: string },
  rawBody: string,
  now = Date.now(),
): string {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) throw SignInErrors.invalidWebhookSignature();
  if (Math.abs(now / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) throw SignInErrors.invalidWebhookSignature();
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest('base64');
  const matches = signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    return version === 'v1' && value !== undefined && safeEqual(value, expected);
  });
  if (!matches) throw SignInErrors.invalidWebhookSignature();
  return id;
}

function addressesOf(data: Record<string, unknown>): string[] {
  const to = data.to;
  const list = Array.isArray(to) ? to : typeof to === 'string' ? [to] : [];
  return list
    .filter((a): a is string => typeof a === 'string')
    .map((a) => {
      const bracketed = /<([^>]+)>/.exec(a);
      return (bracketed ? bracketed[1]! : a).trim().toLowerCase();
    })
    .filter((a) => a.length > 0 && a.length <= 320);
}

/** Stores an event once by its id; a bounce or complaint suppresses the recipients. */
export async function recordEmailEvent(
  db: SystemDb,
  id: string,
  event: { type: string; data: Record<string, unknown> },
): Promise<{ duplicate: boolean }> {
  const addresses = addressesOf(event.data);
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('email_events')
      .values({ id, type: event.type, addresses, payload: JSON.stringify(event) as never })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return { duplicate: true };
    if (SUPPRESSING.has(event.type) && addresses.length > 0) {
      await trx
        .insertInto('email_suppressions')
        .values(addresses.map((address) => ({ address, reason: event.type.replace(/^email\./, '') })))
        .onConflict((oc) => oc.column('address').doNothing())
        .execute();
    }
    return { duplicate: false };
  });
}
