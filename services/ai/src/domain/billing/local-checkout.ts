import { randomBytes } from 'node:crypto';
import { hashToken } from '@agentyard/crypto';
import { sql, type Plan, type UserTx } from '@agentyard/db';
import { AiErrors } from '../../errors.ts';

/**
 * The development checkout (BILLING_PROVIDER=local): a checkout is a row of the user's own (RLS:
 * nobody else can see it), found by the hash of the id in its URL. The user starts and reads it;
 * completing it writes what the Stripe webhook writes, so that is the system's
 * (`billing-accounts-system.ts`).
 */

export type LocalPurchase = { kind: 'subscription'; plan: Plan } | { kind: 'credits'; amountUsd: number };

export const newLocalId = (prefix: string) => `${prefix}${randomBytes(18).toString('base64url')}`;

/** Starts a development checkout; answers the id that goes in its URL (only its hash is stored). */
export async function startLocalCheckout(
  trx: UserTx,
  userId: string,
  purchase: LocalPurchase,
  ttlSeconds: number,
): Promise<{ id: string; sessionId: string }> {
  const id = newLocalId('');
  const sessionId = newLocalId('cs_local_');
  await trx
    .insertInto('local_checkouts')
    .values({
      id_hash: hashToken(id),
      user_id: userId,
      kind: purchase.kind,
      session_id: sessionId,
      plan: purchase.kind === 'subscription' ? purchase.plan : null,
      amount_usd: purchase.kind === 'credits' ? purchase.amountUsd.toFixed(2) : null,
      expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
    })
    .execute();
  return { id, sessionId };
}

export interface LocalCheckoutView {
  purchase: LocalPurchase;
  sessionId: string;
  status: 'open' | 'complete' | 'expired';
}

const viewOf = (row: {
  kind: 'subscription' | 'credits';
  plan: string | null;
  amount_usd: string | null;
  session_id: string;
  completed_at: Date | null;
  expired: boolean;
}): LocalCheckoutView => ({
  purchase:
    row.kind === 'subscription'
      ? { kind: 'subscription', plan: row.plan as Plan }
      : { kind: 'credits', amountUsd: Number(row.amount_usd) },
  sessionId: row.session_id,
  status: row.completed_at ? 'complete' : row.expired ? 'expired' : 'open',
});

const checkoutColumns = [
  'kind',
  'plan',
  'amount_usd',
  'session_id',
  'completed_at',
  sql<boolean>`expires_at <= now()`.as('expired'),
] as const;

/** The caller's checkout behind a URL id (404 for anyone else's or an unknown one). */
export async function localCheckout(trx: UserTx, id: string): Promise<LocalCheckoutView> {
  const row = await trx
    .selectFrom('local_checkouts')
    .select([...checkoutColumns])
    .where('id_hash', '=', hashToken(id))
    .executeTakeFirst();
  if (!row) throw AiErrors.checkoutNotFound();
  return viewOf(row);
}

/** The caller's checkout by its session id, for the return page. */
export async function localCheckoutBySession(trx: UserTx, sessionId: string): Promise<LocalCheckoutView> {
  const row = await trx
    .selectFrom('local_checkouts')
    .select([...checkoutColumns])
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  if (!row) throw AiErrors.checkoutNotFound();
  return viewOf(row);
}
