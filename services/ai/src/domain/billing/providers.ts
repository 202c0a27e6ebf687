import type Stripe from 'stripe';
import { isPlan, type Plan, type UserTx } from '@agentyard/db';
import { AiErrors } from '../../errors.ts';
import { customerOf, recordCustomer } from './purchases.ts';
import { localCheckoutBySession, startLocalCheckout } from './local-checkout.ts';
import type { Log } from '@agentyard/http';

/** The caller's own transaction (RLS), as `request.asUser` gives it. */
export type AsUser = <T>(work: (trx: UserTx) => Promise<T>) => Promise<T>;
export interface Buyer {
  id: string;
  email: string | null;
  asUser: AsUser;
}

export interface CheckoutState {
  sessionId: string;
  status: 'open' | 'complete' | 'expired';
  kind: 'subscription' | 'credits';
  plan: Plan | null;
  amountUsd: number | null;
}

/** Where a checkout, the portal and a checkout's state come from: Stripe, or the platform itself in development. */
export interface BillingProvider {
  readonly name: 'stripe' | 'local';
  subscriptionCheckout(buyer: Buyer, plan: Plan): Promise<string>;
  creditsCheckout(buyer: Buyer, amountUsd: number): Promise<string>;
  portal(buyer: Buyer): Promise<string>;
  checkoutState(buyer: Buyer, sessionId: string): Promise<CheckoutState>;
}

export interface ProviderSettings {
  publicBaseUrl: string;
  /** Stripe price id per plan ('' when not configured). */
  prices: Record<Plan, string>;
  localCheckoutTtlSeconds: number;
  log: Pick<Log, 'warn'>;
}

const base = (url: string) => url.replace(/\/$/, '');

/** Stripe's error for an id it does not know. */
const isMissing = (error: unknown) => (error as { code?: string; statusCode?: number }).code === 'resource_missing' || (error as { statusCode?: number }).statusCode === 404;

export function stripeProvider(stripe: Stripe, settings: ProviderSettings): BillingProvider {
  const home = base(settings.publicBaseUrl);
  /** A Stripe call: its failure is the provider's (502), never a 500; the reason is logged, not shown. */
  async function call<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      settings.log.warn({ stripe: what, reason: (error as Error).message, code: (error as { code?: string }).code }, 'stripe call failed');
      throw isMissing(error) ? AiErrors.checkoutNotFound() : AiErrors.paymentProviderFailed();
    }
  }
  /** The user's Stripe customer, made once (every checkout and the portal name the same one). */
  async function customer(buyer: Buyer): Promise<string> {
    const known = await buyer.asUser((trx) => customerOf(trx, buyer.id));
    if (known) return known;
    const made = await call('customers.create', () =>
      stripe.customers.create({ ...(buyer.email ? { email: buyer.email } : {}), metadata: { userId: buyer.id } }, { idempotencyKey: `customer-${buyer.id}` }),
    );
    return buyer.asUser(async (trx) => {
      await recordCustomer(trx, buyer.id, 'stripe', made.id);
      return (await customerOf(trx, buyer.id))!;
    });
  }
  const returnUrls = {
    // Stripe fills in {CHECKOUT_SESSION_ID}, so the return page can verify the session.
    success_url: `${home}/dashboard?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${home}/dashboard?checkout=cancel`,
  };
  return {
    name: 'stripe',
    async subscriptionCheckout(buyer, plan) {
      const price = settings.prices[plan];
      if (!price) throw AiErrors.priceNotConfigured(plan);
      const session = await call('checkout.sessions.create', async () =>
        stripe.checkout.sessions.create({
          mode: 'subscription',
          customer: await customer(buyer),
          client_reference_id: buyer.id,
          line_items: [{ price, quantity: 1 }],
          ...returnUrls,
          metadata: { userId: buyer.id, plan, kind: 'subscription' },
          subscription_data: { metadata: { userId: buyer.id, plan } },
        }),
      );
      if (!session.url) throw AiErrors.paymentProviderFailed();
      return session.url;
    },
    async creditsCheckout(buyer, amountUsd) {
      const cents = Math.round(amountUsd * 100);
      const session = await call('checkout.sessions.create', async () =>
        stripe.checkout.sessions.create({
          mode: 'payment',
          customer: await customer(buyer),
          client_reference_id: buyer.id,
          line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: cents, product_data: { name: 'AI credits' } } }],
          ...returnUrls,
          metadata: { userId: buyer.id, kind: 'credits', amountUsd: (cents / 100).toFixed(2) },
          payment_intent_data: { metadata: { userId: buyer.id, kind: 'credits' } },
        }),
      );
      if (!session.url) throw AiErrors.paymentProviderFailed();
      return session.url;
    },
    async portal(buyer) {
      const customerId = await buyer.asUser((trx) => customerOf(trx, buyer.id));
      if (!customerId) throw AiErrors.noBillingAccount();
      const session = await call('billingPortal.sessions.create', () => stripe.billingPortal.sessions.create({ customer: customerId, return_url: `${home}/dashboard` }));
      return session.url;
    },
    async checkoutState(buyer, sessionId) {
      const session = await call('checkout.sessions.retrieve', () => stripe.checkout.sessions.retrieve(sessionId));
      // Only the caller's own sessions: anyone else's is as unknown as a made-up id.
      if (session.client_reference_id !== buyer.id) throw AiErrors.checkoutNotFound();
      const credits = session.mode === 'payment';
      const status: CheckoutState['status'] = session.status === 'complete' ? 'complete' : session.status === 'expired' ? 'expired' : 'open';
      return {
        sessionId: session.id,
        status,
        kind: credits ? 'credits' : 'subscription',
        plan: !credits && isPlan(session.metadata?.plan) ? session.metadata.plan : null,
        amountUsd: credits && session.amount_total != null ? session.amount_total / 100 : null,
      };
    },
  };
}

/** BILLING_PROVIDER=local: checkouts on the platform itself (development only; config refuses it in production). */
export function localProvider(settings: ProviderSettings): BillingProvider {
  const home = base(settings.publicBaseUrl);
  const checkoutUrl = (id: string) => `${home}/api/billing/local-checkout/${id}`;
  return {
    name: 'local',
    async subscriptionCheckout(buyer, plan) {
      const { id } = await buyer.asUser((trx) => startLocalCheckout(trx, buyer.id, { kind: 'subscription', plan }, settings.localCheckoutTtlSeconds));
      return checkoutUrl(id);
    },
    async creditsCheckout(buyer, amountUsd) {
      const { id } = await buyer.asUser((trx) => startLocalCheckout(trx, buyer.id, { kind: 'credits', amountUsd }, settings.localCheckoutTtlSeconds));
      return checkoutUrl(id);
    },
    async portal(buyer) {
      const customerId = await buyer.asUser((trx) => customerOf(trx, buyer.id));
      if (!customerId) throw AiErrors.noBillingAccount();
      return `${home}/api/billing/local-portal`;
    },
    async checkoutState(buyer, sessionId) {
      const view = await buyer.asUser((trx) => localCheckoutBySession(trx, sessionId));
      return {
        sessionId: view.sessionId,
        status: view.status,
        kind: view.purchase.kind,
        plan: view.purchase.kind === 'subscription' ? view.purchase.plan : null,
        amountUsd: view.purchase.kind === 'credits' ? view.purchase.amountUsd : null,
      };
    },
  };
}
