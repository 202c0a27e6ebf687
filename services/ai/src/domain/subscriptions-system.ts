import type Stripe from 'stripe';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { PLANS, type Plan } from '@agentyard/proto-schemas';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SubscriptionRow { id: string; userId: string | null; plan: string | null; status: string }

/** A subscription as the synced table holds it (no call to Stripe); whether its status counts as active is the caller's rule. */
export async function subscriptionById(db: SystemDb, id: string): Promise<SubscriptionRow | undefined> {
  const row = await db.selectFrom('subscriptions').select(['id', 'user_id as userId', 'plan', 'status']).where('id', '=', id).executeTakeFirst();
  return row;
}

/** The user's newest active subscription (its plan is null when Stripe named none), if any. */
export async function activeSubscriptionOf(db: SystemDb, userId: string, activeStatuses: readonly string[]): Promise<{ plan: string | null } | undefined> {
  return db.selectFrom('subscriptions').select('plan').where('user_id', '=', userId).where('status', 'in', [...activeStatuses])
    .orderBy('updated_at', 'desc').limit(1).executeTakeFirst();
}

async function knownUser(db: Pick<SystemDb, 'selectFrom'>, candidate: unknown, email?: string | null): Promise<string | null> {
  if (typeof candidate === 'string' && UUID.test(candidate)) {
    const row = await db.selectFrom('users').select('id').where('id', '=', candidate).executeTakeFirst();
    if (row) return row.id;
  }
  if (email) {
    const row = await db.selectFrom('users').select('id').where(sql`lower(email)`, '=', email.toLowerCase()).executeTakeFirst();
    if (row) return row.id;
  }
  return null;
}

function planOf(subscription: Stripe.Subscription): Plan | null {
  const price = subscription.items?.data?.[0]?.price;
  const candidates = [subscription.metadata?.plan, price?.lookup_key, price?.metadata?.plan];
  return (candidates.find((c) => typeof c === 'string' && (PLANS as readonly string[]).includes(c)) as Plan | undefined) ?? null;
}

const idOf = (value: string | { id: string } | null | undefined) => (typeof value === 'string' ? value : value?.id ?? null);

/**
 * Applies one verified Stripe event to the subscriptions table, once: the event id is recorded in
 * the same transaction, a repeat is acknowledged without effect, and a subscription event older
 * than one already applied to the same subscription does not overwrite newer state.
 */
export async function applyStripeEvent(db: SystemDb, event: Stripe.Event): Promise<{ duplicate: boolean; subscriptionId: string | null }> {
  const object = event.data.object as { id?: string; object?: string };
  const objectId = event.type.startsWith('customer.subscription.') ? object.id ?? null
    : event.type === 'checkout.session.completed' ? idOf((object as Stripe.Checkout.Session).subscription) : null;
  const created = new Date(event.created * 1000);
  return db.transaction().execute(async (trx) => {
    const recorded = await trx.insertInto('stripe_events').values({ id: event.id, type: event.type, object_id: objectId, created })
      .onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst();
    if (!recorded) return { duplicate: true, subscriptionId: null };

    if (event.type.startsWith('customer.subscription.') && objectId) {
      const newer = await trx.selectFrom('stripe_events').select('id')
        .where('object_id', '=', objectId).where('type', 'like', 'customer.subscription.%').where('created', '>', created).where('id', '<>', event.id)
        .executeTakeFirst();
      if (newer) return { duplicate: false, subscriptionId: null };
      const subscription = event.data.object as Stripe.Subscription;
      const item = subscription.items?.data?.[0] as (Stripe.SubscriptionItem & { current_period_end?: number }) | undefined;
      const periodEnd = (subscription as { current_period_end?: number }).current_period_end ?? item?.current_period_end;
      const userId = await knownUser(trx, subscription.metadata?.userId ?? subscription.metadata?.user_id);
      await trx.insertInto('subscriptions').values({
        id: subscription.id, user_id: userId, customer_id: idOf(subscription.customer), status: subscription.status,
        plan: planOf(subscription), current_period_end: periodEnd ? new Date(periodEnd * 1000) : null, updated_at: new Date(),
      }).onConflict((oc) => oc.column('id').doUpdateSet({
        status: (eb) => eb.ref('excluded.status'),
        customer_id: (eb) => eb.ref('excluded.customer_id'),
        current_period_end: (eb) => eb.ref('excluded.current_period_end'),
        plan: sql`coalesce(excluded.plan, subscriptions.plan)`,
        user_id: sql`coalesce(excluded.user_id, subscriptions.user_id)`,
        updated_at: sql`now()`,
      })).execute();
    } else if (event.type === 'checkout.session.completed' && objectId) {
      const session = event.data.object as Stripe.Checkout.Session;
      const email = session.customer_details?.email ?? session.customer_email ?? null;
      const userId = await knownUser(trx, session.client_reference_id, email);
      await trx.insertInto('subscriptions').values({
        id: objectId, user_id: userId, customer_id: idOf(session.customer), customer_email: email, status: 'incomplete', updated_at: new Date(),
      }).onConflict((oc) => oc.column('id').doUpdateSet({
        user_id: sql`coalesce(excluded.user_id, subscriptions.user_id)`,
        customer_email: sql`coalesce(excluded.customer_email, subscriptions.customer_email)`,
        customer_id: sql`coalesce(excluded.customer_id, subscriptions.customer_id)`,
        updated_at: sql`now()`,
      })).execute();
    }
    return { duplicate: false, subscriptionId: objectId };
  });
}
