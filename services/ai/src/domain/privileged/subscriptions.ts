import type Stripe from 'stripe';
import { sql, type Plan } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { Log } from '@agentyard/http';
import { planOfPrice, type PlanPrices } from '../billing/plan-prices.ts';
import {
  addPurchasedCredits,
  recordCustomer,
  recordSubscription,
  reversePurchasedCredits,
} from '../billing/purchases.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SubscriptionRow {
  id: string;
  userId: string | null;
  plan: string | null;
  status: string;
}

/** A subscription as the synced table holds it (no call to Stripe); whether its status counts as active is the caller's rule. */
export async function subscriptionById(db: SystemDb, id: string): Promise<SubscriptionRow | undefined> {
  const row = await db
    .selectFrom('subscriptions')
    .select(['id', 'user_id as userId', 'plan', 'status'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row;
}

async function knownUser(
  db: Pick<SystemDb, 'selectFrom'>,
  candidate: unknown,
  email?: string | null,
): Promise<string | null> {
  if (typeof candidate === 'string' && UUID.test(candidate)) {
    const row = await db.selectFrom('users').select('id').where('id', '=', candidate).executeTakeFirst();
    if (row) return row.id;
  }
  if (email) {
    const row = await db
      .selectFrom('users')
      .select('id')
      .where(sql`lower(email)`, '=', email.toLowerCase())
      .executeTakeFirst();
    if (row) return row.id;
  }
  return null;
}

/** How the webhook reads what was bought: the configured price id of each plan. */
export interface StripeEventContext {
  prices: PlanPrices;
  log: Pick<Log, 'warn'>;
}

/**
 * The plan a subscription pays for: the plan whose configured price it is billed at, never its
 * metadata (which a portal price change leaves as it was). A price that is not one of ours: no plan.
 */
function planOf(subscription: Stripe.Subscription, context: StripeEventContext): Plan | null {
  const price = subscription.items?.data?.[0]?.price;
  const priceId = typeof price === 'string' ? price : price?.id;
  const plan = planOfPrice(context.prices, priceId);
  if (!plan)
    context.log.warn(
      { subscription: subscription.id, price: priceId ?? null },
      'subscription billed at a price of no plan: no paid plan',
    );
  return plan;
}

const idOf = (value: string | { id: string } | null | undefined) =>
  typeof value === 'string' ? value : (value?.id ?? null);

/** A checkout that bought credits (our metadata says so), paid. */
const isPaidCredits = (session: Stripe.Checkout.Session) =>
  session.mode === 'payment' && session.metadata?.kind === 'credits' && session.payment_status === 'paid';

/** The object an event is about, for ordering subscription events and locking per payment. */
function objectIdOf(event: Stripe.Event): string | null {
  const object = event.data.object as { id?: string };
  if (event.type.startsWith('customer.subscription.')) return object.id ?? null;
  if (event.type === 'checkout.session.completed' || event.type === 'checkout.session.async_payment_succeeded') {
    const session = event.data.object as Stripe.Checkout.Session;
    return session.mode === 'subscription' ? idOf(session.subscription) : (idOf(session.payment_intent) ?? session.id);
  }
  if (event.type === 'charge.refunded') return idOf((event.data.object as Stripe.Charge).payment_intent);
  if (event.type === 'charge.dispute.created') return idOf((event.data.object as Stripe.Dispute).payment_intent);
  return null;
}

/** The subscription an event is about, if any (its own events, and a subscription checkout's completion). */
function subscriptionOf(event: Stripe.Event, objectId: string | null): string | null {
  if (event.type.startsWith('customer.subscription.')) return objectId;
  const session = event.data.object as Stripe.Checkout.Session;
  return event.type.startsWith('checkout.session.') && session.mode === 'subscription' ? objectId : null;
}

/**
 * Applies one verified Stripe event (see below) and answers, besides, which subscription it is
 * about (`touched`, repeats too): whatever follows from a plan change is idempotent and is asked
 * for again on a repeat, in case the first delivery could not ask.
 */
export async function applyStripeEvent(
  db: SystemDb,
  event: Stripe.Event,
  context: StripeEventContext,
): Promise<{ duplicate: boolean; subscriptionId: string | null; touched: string | null }> {
  const applied = await applyOnce(db, event, context);
  return { ...applied, touched: subscriptionOf(event, objectIdOf(event)) };
}

/**
 * Applies one verified Stripe event, once: the event id is recorded in the same transaction and a
 * repeat is acknowledged without effect. It dispatches on what was bought: subscription events
 * set the plan (an event older than one already applied to the same subscription does not
 * overwrite newer state); a paid credits checkout adds a ledger entry; refunds and disputes take
 * those credits back.
 */
async function applyOnce(
  db: SystemDb,
  event: Stripe.Event,
  context: StripeEventContext,
): Promise<{ duplicate: boolean; subscriptionId: string | null }> {
  const objectId = objectIdOf(event);
  const created = new Date(event.created * 1000);
  return db.transaction().execute(async (trx) => {
    const recorded = await trx
      .insertInto('stripe_events')
      .values({ id: event.id, type: event.type, object_id: objectId, created })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!recorded) return { duplicate: true, subscriptionId: null };

    if (event.type.startsWith('customer.subscription.') && objectId) {
      const newer = await trx
        .selectFrom('stripe_events')
        .select('id')
        .where('object_id', '=', objectId)
        .where('type', 'like', 'customer.subscription.%')
        .where('created', '>', created)
        .where('id', '<>', event.id)
        .executeTakeFirst();
      if (newer) return { duplicate: false, subscriptionId: null };
      const subscription = event.data.object as Stripe.Subscription;
      const item = subscription.items?.data?.[0] as
        | (Stripe.SubscriptionItem & { current_period_end?: number })
        | undefined;
      const periodEnd =
        (subscription as { current_period_end?: number }).current_period_end ?? item?.current_period_end;
      const userId = await knownUser(trx, subscription.metadata?.userId ?? subscription.metadata?.user_id);
      const customerId = idOf(subscription.customer);
      await recordSubscription(trx, {
        id: subscription.id,
        userId,
        customerId,
        status: subscription.status,
        plan: planOf(subscription, context),
        currentPeriodEnd: periodEnd ? new Date(periodEnd * 1000) : null,
        cancelAtPeriodEnd: subscription.cancel_at_period_end === true,
      });
      if (userId && customerId) await recordCustomer(trx, userId, 'stripe', customerId);
      return { duplicate: false, subscriptionId: objectId };
    }

    if (
      (event.type === 'checkout.session.completed' || event.type === 'checkout.session.async_payment_succeeded') &&
      objectId
    ) {
      const session = event.data.object as Stripe.Checkout.Session;
      const email = session.customer_details?.email ?? session.customer_email ?? null;
      const userId = await knownUser(trx, session.client_reference_id, email);
      const customerId = idOf(session.customer);
      if (userId && customerId) await recordCustomer(trx, userId, 'stripe', customerId);
      if (session.mode === 'subscription') {
        // The subscription's own events carry its status and plan (its price); this links it to the user who paid.
        await recordSubscription(trx, {
          id: objectId,
          userId,
          customerId,
          customerEmail: email,
          status: null,
          currentPeriodEnd: null,
          cancelAtPeriodEnd: null,
        });
        return { duplicate: false, subscriptionId: objectId };
      }
      if (isPaidCredits(session) && userId && session.amount_total) {
        await addPurchasedCredits(trx, {
          userId,
          amountUsd: session.amount_total / 100,
          payment: `stripe:${objectId}`,
        });
      }
      return { duplicate: false, subscriptionId: null };
    }

    if (event.type === 'charge.refunded' && objectId) {
      const charge = event.data.object as Stripe.Charge;
      await reversePurchasedCredits(trx, {
        payment: `stripe:${objectId}`,
        reason: `refund:${charge.amount_refunded}`,
        upTo: charge.amount_refunded / 100,
      });
    } else if (event.type === 'charge.dispute.created' && objectId) {
      const dispute = event.data.object as Stripe.Dispute;
      await reversePurchasedCredits(trx, {
        payment: `stripe:${objectId}`,
        reason: `dispute:${dispute.id}`,
        extra: dispute.amount / 100,
      });
    }
    return { duplicate: false, subscriptionId: null };
  });
}
