import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import { isPlan, type Plan, type UserTx } from '@agentyard/db';
import { AiErrors } from '../../errors.ts';
import type { BillingAccounts } from './privileged/billing-accounts.ts';
import { customerOf } from './purchases.ts';
import { localCheckoutBySession, startLocalCheckout } from './local-checkout.ts';
import { sellablePrices, type PlanPrices } from './plan-prices.ts';
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
  prices: PlanPrices;
  localCheckoutTtlSeconds: number;
  /** Where the customer rows are written (the system connection: the user's role may not). */
  accounts: BillingAccounts;
  log: Pick<Log, 'warn'>;
}

const base = (url: string) => url.replace(/\/$/, '');

/** Stripe's error for an id it does not know. */
const isMissing = (error: unknown) =>
  (error as { code?: string; statusCode?: number }).code === 'resource_missing' ||
  (error as { statusCode?: number }).statusCode === 404;

/** Marks the portal configuration made for one set of prices, so it is found again instead of made twice. */
const PORTAL_MARK = 'agentyard_prices';

/**
 * The customer portal's configuration: subscriptions may change only to the platform's own prices
 * (a portal left to the account's default lets a customer pick any product's price). Found by its
 * mark among the account's configurations, else created once for these prices.
 */
async function portalConfiguration(stripe: Stripe, prices: PlanPrices, returnUrl: string): Promise<string> {
  const sellable = sellablePrices(prices).sort();
  const mark = createHash('sha256').update(sellable.join(',')).digest('hex').slice(0, 32);
  for await (const configuration of stripe.billingPortal.configurations.list({ active: true, limit: 100 })) {
    if (configuration.metadata?.[PORTAL_MARK] === mark) return configuration.id;
  }
  const byProduct = new Map<string, string[]>();
  for (const id of sellable) {
    const price = await stripe.prices.retrieve(id);
    const product = typeof price.product === 'string' ? price.product : price.product.id;
    byProduct.set(product, [...(byProduct.get(product) ?? []), id]);
  }
  const made = await stripe.billingPortal.configurations.create(
    {
      default_return_url: returnUrl,
      metadata: { [PORTAL_MARK]: mark },
      features: {
        invoice_history: { enabled: true },
        payment_method_update: { enabled: true },
        subscription_cancel: { enabled: true, mode: 'at_period_end' },
        subscription_update:
          byProduct.size > 0
            ? {
                enabled: true,
                default_allowed_updates: ['price'],
                proration_behavior: 'create_prorations',
                products: [...byProduct].map(([product, ids]) => ({ product, prices: ids })),
              }
            : { enabled: false },
      },
    },
    { idempotencyKey: `portal-configuration-${mark}` },
  );
  return made.id;
}

export function stripeProvider(stripe: Stripe, settings: ProviderSettings): BillingProvider {
  const home = base(settings.publicBaseUrl);
  /** A Stripe call: its failure is the provider's (502), never a 500; the reason is logged, not shown. */
  async function call<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      settings.log.warn(
        { stripe: what, reason: (error as Error).message, code: (error as { code?: string }).code },
        'stripe call failed',
      );
      throw isMissing(error) ? AiErrors.checkoutNotFound() : AiErrors.paymentProviderFailed();
    }
  }
  /** The user's Stripe customer, made once (every checkout and the portal name the same one). */
  async function customer(buyer: Buyer): Promise<string> {
    const known = await buyer.asUser((trx) => customerOf(trx, buyer.id));
    if (known) return known;
    const made = await call('customers.create', () =>
      stripe.customers.create(
        { ...(buyer.email ? { email: buyer.email } : {}), metadata: { userId: buyer.id } },
        { idempotencyKey: `customer-${buyer.id}` },
      ),
    );
    return settings.accounts.recordCustomer(buyer.id, 'stripe', made.id);
  }
  let portalConfigurationId: Promise<string> | null = null;
  /** This process's portal configuration, looked up once (a failed look-up is tried again next time). */
  const ourPortal = (): Promise<string> => {
    // Any failure here (a configured price Stripe does not know included) is the provider's: 502, logged.
    portalConfigurationId ??= portalConfiguration(stripe, settings.prices, `${home}/dashboard`).catch(
      (error: unknown) => {
        portalConfigurationId = null;
        settings.log.warn(
          {
            stripe: 'billingPortal.configurations',
            reason: (error as Error).message,
            code: (error as { code?: string }).code,
          },
          'stripe call failed',
        );
        throw AiErrors.paymentProviderFailed();
      },
    );
    return portalConfigurationId;
  };
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
          line_items: [
            { quantity: 1, price_data: { currency: 'usd', unit_amount: cents, product_data: { name: 'AI credits' } } },
          ],
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
      const configuration = await ourPortal();
      const session = await call('billingPortal.sessions.create', () =>
        stripe.billingPortal.sessions.create({ customer: customerId, return_url: `${home}/dashboard`, configuration }),
      );
      return session.url;
    },
    async checkoutState(buyer, sessionId) {
      const session = await call('checkout.sessions.retrieve', () => stripe.checkout.sessions.retrieve(sessionId));
      // Only the caller's own sessions: anyone else's is as unknown as a made-up id.
      if (session.client_reference_id !== buyer.id) throw AiErrors.checkoutNotFound();
      const credits = session.mode === 'payment';
      const status: CheckoutState['status'] =
        session.status === 'complete' ? 'complete' : session.status === 'expired' ? 'expired' : 'open';
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
      await settings.accounts.localCustomer(buyer.id);
      const { id } = await buyer.asUser((trx) =>
        startLocalCheckout(trx, buyer.id, { kind: 'subscription', plan }, settings.localCheckoutTtlSeconds),
      );
      return checkoutUrl(id);
    },
    async creditsCheckout(buyer, amountUsd) {
      await settings.accounts.localCustomer(buyer.id);
      const { id } = await buyer.asUser((trx) =>
        startLocalCheckout(trx, buyer.id, { kind: 'credits', amountUsd }, settings.localCheckoutTtlSeconds),
      );
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
