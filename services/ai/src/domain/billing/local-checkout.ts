import { randomBytes } from 'node:crypto';
import { hashToken } from '@agentyard/crypto';
import { sql, type Plan, type UserTx } from '@agentyard/db';
import { AiErrors } from '../../errors.ts';
import { addPurchasedCredits, customerOf, recordCustomer, recordSubscription } from './purchases.ts';

/**
 * The development checkout (BILLING_PROVIDER=local): a checkout is a row of the user's own (RLS:
 * nobody else can see or complete it), found by the hash of the id in its URL, completed once,
 * before it expires, by writing what the Stripe webhook writes for the same purchase.
 */

export type LocalPurchase = { kind: 'subscription'; plan: Plan } | { kind: 'credits'; amountUsd: number };

const newId = (prefix: string) => `${prefix}${randomBytes(18).toString('base64url')}`;

/** The local provider's customer for the user (made once, like Stripe's at the first checkout). */
async function localCustomer(trx: UserTx, userId: string): Promise<string> {
  const existing = await customerOf(trx, userId);
  if (existing) return existing;
  await recordCustomer(trx, userId, 'local', newId('cus_local_'));
  return (await customerOf(trx, userId))!;
}

/** Starts a development checkout; answers the id that goes in its URL (only its hash is stored). */
export async function startLocalCheckout(trx: UserTx, userId: string, purchase: LocalPurchase, ttlSeconds: number): Promise<{ id: string; sessionId: string }> {
  await localCustomer(trx, userId);
  const id = newId('');
  const sessionId = newId('cs_local_');
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

const viewOf = (row: { kind: 'subscription' | 'credits'; plan: string | null; amount_usd: string | null; session_id: string; completed_at: Date | null; expired: boolean }): LocalCheckoutView => ({
  purchase: row.kind === 'subscription' ? { kind: 'subscription', plan: row.plan as Plan } : { kind: 'credits', amountUsd: Number(row.amount_usd) },
  sessionId: row.session_id,
  status: row.completed_at ? 'complete' : row.expired ? 'expired' : 'open',
});

const checkoutColumns = ['kind', 'plan', 'amount_usd', 'session_id', 'completed_at', sql<boolean>`expires_at <= now()`.as('expired')] as const;

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

/** One calendar month on (what a monthly Stripe price's first period spans). */
const monthLater = (from: Date) => {
  const end = new Date(from);
  end.setUTCMonth(end.getUTCMonth() + 1);
  return end;
};

/**
 * Completes the caller's open checkout once (the row is claimed by one UPDATE, so a second POST or
 * a concurrent one finds it used: 410), then writes what the Stripe webhook writes: an active
 * subscription of the plan, or a credits purchase entry.
 */
export async function completeLocalCheckout(trx: UserTx, userId: string, email: string | null, id: string): Promise<LocalPurchase> {
  const claimed = await trx
    .updateTable('local_checkouts')
    .set({ completed_at: sql<Date>`now()` })
    .where('id_hash', '=', hashToken(id))
    .where('completed_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['kind', 'plan', 'amount_usd', 'session_id'])
    .executeTakeFirst();
  if (!claimed) {
    await localCheckout(trx, id); // 404 when it is not the caller's at all
    throw AiErrors.checkoutUsed();
  }
  const customerId = await localCustomer(trx, userId);
  if (claimed.kind === 'subscription') {
    await recordSubscription(trx, {
      id: newId('sub_local_'),
      userId,
      customerId,
      customerEmail: email,
      status: 'active',
      plan: claimed.plan,
      currentPeriodEnd: monthLater(new Date()),
      cancelAtPeriodEnd: false,
    });
    return { kind: 'subscription', plan: claimed.plan as Plan };
  }
  const amountUsd = Number(claimed.amount_usd);
  await addPurchasedCredits(trx, { userId, amountUsd, payment: `local:${claimed.session_id}` });
  return { kind: 'credits', amountUsd };
}

/** The development portal's cancel: ends the user's active subscriptions now, as `customer.subscription.deleted` does. */
export async function cancelLocalSubscription(trx: UserTx, userId: string, activeStatuses: readonly string[]): Promise<void> {
  const active = await trx
    .selectFrom('subscriptions')
    .select(['id', 'customer_id'])
    .where('user_id', '=', userId)
    .where('status', 'in', [...activeStatuses])
    .execute();
  if (active.length === 0) throw AiErrors.noSubscription();
  for (const subscription of active) {
    await recordSubscription(trx, { id: subscription.id, userId, customerId: subscription.customer_id, status: 'canceled', plan: null, currentPeriodEnd: null, cancelAtPeriodEnd: false });
  }
}
