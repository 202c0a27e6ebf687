import { lockForTransaction, sql, type Database, type Kysely, type Transaction } from '@agentyard/db';
import { addCreditEntry } from '../spending/index.ts';

/**
 * What a payment leaves behind, written by one set of functions whichever provider took it: the
 * Stripe webhook (system connection) and the local development checkout (the user's transaction)
 * write the same rows.
 */

export interface SubscriptionState {
  id: string;
  /** null: the payment provider named no user we know (yet). */
  userId: string | null;
  customerId: string | null;
  customerEmail?: string | null;
  /** null: keep the stored one (a new row starts `incomplete`). */
  status: string | null;
  /** The plan it pays for (null: none, e.g. a price of no plan); absent: keep the stored one. */
  plan?: string | null;
  currentPeriodEnd: Date | null;
  /** null: keep the stored one. */
  cancelAtPeriodEnd: boolean | null;
}

/** Creates or updates a subscription; fields the event does not know (null) keep what is stored. */
export async function recordSubscription(db: Kysely<Database>, state: SubscriptionState): Promise<void> {
  await db
    .insertInto('subscriptions')
    .values({
      id: state.id,
      user_id: state.userId,
      customer_id: state.customerId,
      customer_email: state.customerEmail ?? null,
      status: state.status ?? 'incomplete',
      plan: state.plan ?? null,
      current_period_end: state.currentPeriodEnd,
      cancel_at_period_end: state.cancelAtPeriodEnd ?? false,
      updated_at: new Date(),
    })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({
        status: (eb) => (state.status === null ? eb.ref('subscriptions.status') : eb.ref('excluded.status')),
        customer_id: sql`coalesce(excluded.customer_id, subscriptions.customer_id)`,
        customer_email: sql`coalesce(excluded.customer_email, subscriptions.customer_email)`,
        current_period_end: sql`coalesce(excluded.current_period_end, subscriptions.current_period_end)`,
        cancel_at_period_end: (eb) =>
          state.cancelAtPeriodEnd === null
            ? eb.ref('subscriptions.cancel_at_period_end')
            : eb.ref('excluded.cancel_at_period_end'),
        plan: (eb) => (state.plan === undefined ? eb.ref('subscriptions.plan') : eb.ref('excluded.plan')),
        user_id: sql`coalesce(excluded.user_id, subscriptions.user_id)`,
        updated_at: sql`now()`,
      }),
    )
    .execute();
}

/** The user's customer at the payment provider, kept once (the first one recorded stays). */
export async function recordCustomer(
  db: Kysely<Database>,
  userId: string,
  provider: 'stripe' | 'local',
  customerId: string,
): Promise<void> {
  await db
    .insertInto('billing_customers')
    .values({ user_id: userId, provider, customer_id: customerId })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export const customerOf = async (db: Kysely<Database>, userId: string): Promise<string | undefined> =>
  (await db.selectFrom('billing_customers').select('customer_id').where('user_id', '=', userId).executeTakeFirst())
    ?.customer_id;

/** The ledger source of a paid credits purchase (`stripe:<payment intent>`, `local:<session>`): refunds find it by this. */
export const purchaseSource = (payment: string) => `payment:${payment}`;
const reversalPrefix = (payment: string) => `reversal:${payment}:`;

/** A paid credits purchase: one `purchase` entry, once per payment. */
export async function addPurchasedCredits(
  db: Kysely<Database>,
  purchase: { userId: string; amountUsd: number; payment: string },
): Promise<boolean> {
  const { added } = await addCreditEntry(db, {
    userId: purchase.userId,
    kind: 'purchase',
    amountUsd: purchase.amountUsd,
    note: 'Credits purchase',
    source: purchaseSource(purchase.payment),
  });
  return added;
}

/**
 * Takes back credits of a refunded or disputed purchase: `upTo` is how much of it the provider
 * says is reversed in total (refunds: cumulative), `extra` a further amount (a dispute). Never
 * more than was bought; each reversal (`reason`) once. Purchases of nobody we know: nothing.
 */
export async function reversePurchasedCredits(
  trx: Transaction<Database>,
  reversal: { payment: string; reason: string; upTo?: number; extra?: number },
): Promise<number> {
  await lockForTransaction(trx, `credit-reversal:${reversal.payment}`);
  const purchase = await trx
    .selectFrom('credit_entries')
    .select(['user_id', 'amount_usd'])
    .where('source', '=', purchaseSource(reversal.payment))
    .executeTakeFirst();
  if (!purchase) return 0;
  const bought = Number(purchase.amount_usd);
  const done = await trx
    .selectFrom('credit_entries')
    .select(sql<string>`coalesce(-sum(amount_usd), 0)`.as('reversed'))
    .where('user_id', '=', purchase.user_id)
    .where('source', 'like', `${reversalPrefix(reversal.payment)}%`)
    .executeTakeFirstOrThrow();
  const reversed = Number(done.reversed);
  const target = Math.min(bought, reversal.upTo ?? reversed + (reversal.extra ?? 0));
  const amount = Number((target - reversed).toFixed(8));
  if (amount <= 0) return 0;
  const { added } = await addCreditEntry(trx, {
    userId: purchase.user_id,
    kind: 'refund',
    amountUsd: amount,
    note: `Credits purchase reversed (${reversal.reason.split(':')[0]})`,
    source: `${reversalPrefix(reversal.payment)}${reversal.reason}`,
  });
  return added ? amount : 0;
}
