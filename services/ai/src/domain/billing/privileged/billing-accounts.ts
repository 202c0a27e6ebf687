import { hashToken } from '@agentyard/crypto';
import { type Plan, sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { AiErrors } from '../../../errors.ts';
import { type LocalPurchase, newLocalId } from '../local-checkout.ts';
import { addPurchasedCredits, customerOf, recordCustomer, recordSubscription } from '../purchases.ts';

/**
 * The billing rows a web request causes (a payment provider's customer, the development
 * checkout's subscription and credits), written through the system connection: the runtime role
 * may read them and never write them (migration 2026_11_27_1010). Every query names the user,
 * since no row-level security narrows it here.
 */
export interface BillingAccounts {
  /** The user's customer at the provider, recorded once (the first one stays); answers the one kept. */
  recordCustomer(userId: string, provider: 'stripe' | 'local', customerId: string): Promise<string>;
  /** The local provider's customer of the user, made at the first checkout as Stripe's is. */
  localCustomer(userId: string): Promise<string>;
  /** Completes the user's open development checkout once, writing what the Stripe webhook writes. */
  completeLocalCheckout(userId: string, email: string | null, id: string): Promise<LocalPurchase>;
  /** The development portal's cancel: ends the user's active subscriptions now, as `customer.subscription.deleted` does. */
  cancelLocalSubscription(userId: string, activeStatuses: readonly string[]): Promise<void>;
}

/** One calendar month on (what a monthly Stripe price's first period spans). */
const monthLater = (from: Date) => {
  const end = new Date(from);
  end.setUTCMonth(end.getUTCMonth() + 1);
  return end;
};

export function billingAccounts(system: SystemDb): BillingAccounts {
  async function recordCustomerOnce(userId: string, provider: 'stripe' | 'local', customerId: string): Promise<string> {
    await recordCustomer(system, userId, provider, customerId);
    return (await customerOf(system, userId))!;
  }
  const localCustomer = async (userId: string) =>
    (await customerOf(system, userId)) ?? recordCustomerOnce(userId, 'local', newLocalId('cus_local_'));

  return {
    recordCustomer: recordCustomerOnce,
    localCustomer,

    async completeLocalCheckout(userId, email, id) {
      const customerId = await localCustomer(userId);
      return system.transaction().execute(async (trx) => {
        // Claimed by one UPDATE: a second POST, or a concurrent one, finds it used (410).
        const claimed = await trx
          .updateTable('local_checkouts')
          .set({ completed_at: sql<Date>`now()` })
          .where('id_hash', '=', hashToken(id))
          .where('user_id', '=', userId)
          .where('completed_at', 'is', null)
          .where('expires_at', '>', sql<Date>`now()`)
          .returning(['kind', 'plan', 'amount_usd', 'session_id'])
          .executeTakeFirst();
        if (!claimed) {
          const mine = await trx
            .selectFrom('local_checkouts')
            .select('id_hash')
            .where('id_hash', '=', hashToken(id))
            .where('user_id', '=', userId)
            .executeTakeFirst();
          throw mine ? AiErrors.checkoutUsed() : AiErrors.checkoutNotFound();
        }
        if (claimed.kind === 'subscription') {
          await recordSubscription(trx, {
            id: newLocalId('sub_local_'),
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
      });
    },

    async cancelLocalSubscription(userId, activeStatuses) {
      await system.transaction().execute(async (trx) => {
        const active = await trx
          .selectFrom('subscriptions')
          .select(['id', 'customer_id'])
          .where('user_id', '=', userId)
          .where('status', 'in', [...activeStatuses])
          .execute();
        if (active.length === 0) throw AiErrors.noSubscription();
        for (const subscription of active) {
          await recordSubscription(trx, {
            id: subscription.id,
            userId,
            customerId: subscription.customer_id,
            status: 'canceled',
            currentPeriodEnd: null,
            cancelAtPeriodEnd: false,
          });
        }
      });
    },
  };
}
