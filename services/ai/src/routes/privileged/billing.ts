import type { FastifyReply, FastifyRequest } from 'fastify';
import { activeStatusesOf, isPlan, type Plan } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import type { QueueSet } from '@agentyard/queue';
import type { ServiceApp } from '@agentyard/http';
import { billingRoutes as spec, fastifyRoute, walletRoutes } from '@agentyard/proto-schemas';
import type { AiConfig } from '../../config.ts';
import { AiErrors } from '../../errors.ts';
import { billingAccounts } from '../../domain/billing/privileged/billing-accounts.ts';
import { localCheckout } from '../../domain/billing/local-checkout.ts';
import { localCheckoutPage, localPortalPage } from '../../domain/billing/local-pages.ts';
import { planMayHaveChanged } from '../../domain/billing/plan-changes.ts';
import { planPricesOf } from '../../domain/billing/plan-prices.ts';
import { localProvider, stripeProvider, type BillingProvider, type Buyer } from '../../domain/billing/providers.ts';
import { createStripeClient } from '../../domain/billing/stripe-client.ts';
import { billingSummary, hasActiveSubscription } from '../../domain/billing/summary.ts';
import { parseAllowances } from '../../domain/spending/index.ts';

/** Billing on the web surface: the summary, checkouts, the portal, and the development provider's pages. */
export default async function billingRoutesPlugin(app: ServiceApp, options: BillingRouteOptions) {
  const deps = billingRouteDeps(app, options);
  // The development pages post plain forms (a button, no fields).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  purchaseRoutes(app, deps); // /api/billing[/checkout,/portal,/credits], /api/checkout[/verify], /api/wallet/top-up
  developmentPages(app, deps, options.config); // /api/billing/local-checkout/:id, /api/billing/local-portal[/cancel]
}

interface BillingRouteOptions {
  config: AiConfig;
  system: SystemDb;
  queues: QueueSet;
}

/** What the billing routes share: the configured provider, the buyer a request is, the plans' statuses and allowances. */
interface BillingRouteDeps {
  accounts: ReturnType<typeof billingAccounts>;
  activeStatuses: ReturnType<typeof activeStatusesOf>;
  allowances: ReturnType<typeof parseAllowances>;
  /** The console's origin, where the development pages send the buyer back. */
  home: string;
  /** The configured provider; BILLING_PROVIDER=stripe without a key (outside production) has none: 503. */
  billing(): BillingProvider;
  buyer(request: FastifyRequest): Buyer;
  /** The development provider's plan changes reach the agents worker as the webhook's do; the rows are written either way. */
  planChanged(request: FastifyRequest, userId: string): Promise<void>;
  subscriptionCheckout(request: FastifyRequest, plan: Plan): Promise<string>;
}

function billingRouteDeps(app: ServiceApp, { config, system, queues }: BillingRouteOptions): BillingRouteDeps {
  const accounts = billingAccounts(system);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const allowances = parseAllowances(config.PLAN_MONTHLY_ALLOWANCE_USD);
  const settings = {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    localCheckoutTtlSeconds: config.LOCAL_CHECKOUT_TTL_SECONDS,
    accounts,
    log: app.log,
    prices: planPricesOf(config),
  };
  const stripe = config.BILLING_PROVIDER === 'stripe' ? createStripeClient(config) : null;
  const provider: BillingProvider | null =
    config.BILLING_PROVIDER === 'local' ? localProvider(settings) : stripe ? stripeProvider(stripe, settings) : null;
  const billing = (): BillingProvider => {
    if (!provider) throw AiErrors.billingNotConfigured();
    return provider;
  };
  const buyer = (request: FastifyRequest): Buyer => ({
    id: request.identity.userId!,
    email: request.identity.email,
    asUser: (work) => request.asUser(work),
  });
  return {
    accounts,
    activeStatuses,
    allowances,
    home: config.PUBLIC_BASE_URL.replace(/\/$/, ''),
    billing,
    buyer,
    planChanged: (request, userId) =>
      planMayHaveChanged(queues, userId).catch((error: Error) =>
        request.log.error(
          { err: { message: error.message } },
          'plan change not queued: agents beyond the plan keep running',
        ),
      ),
    async subscriptionCheckout(request, plan) {
      if (await request.asUser((trx) => hasActiveSubscription(trx, request.identity.userId!, activeStatuses)))
        throw AiErrors.alreadySubscribed();
      return billing().subscriptionCheckout(buyer(request), plan);
    },
  };
}

const seeOther = (reply: FastifyReply, url: string) => reply.code(303).header('location', url).send();

/** What a user buys: a plan's subscription, credits, and the provider's portal to manage them. */
function purchaseRoutes(app: ServiceApp, deps: BillingRouteDeps) {
  const { activeStatuses, allowances, billing, buyer, subscriptionCheckout } = deps;

  app.route({
    ...fastifyRoute(spec.billing),
    handler: async (request) =>
      request.asUser((trx) =>
        billingSummary(trx, request.identity.userId!, { admin: request.identity.admin, activeStatuses, allowances }),
      ),
  });

  app.route({
    ...fastifyRoute(spec.checkout),
    handler: async (request) => ({ url: await subscriptionCheckout(request, request.body.plan) }),
  });

  app.route({
    ...fastifyRoute(spec.checkoutRedirect),
    handler: async (request, reply) => seeOther(reply, await subscriptionCheckout(request, request.query.plan)),
  });

  app.route({
    ...fastifyRoute(spec.checkoutVerify),
    handler: async (request) => billing().checkoutState(buyer(request), request.query.session_id),
  });

  app.route({
    ...fastifyRoute(spec.portal),
    handler: async (request) => ({ url: await billing().portal(buyer(request)) }),
  });

  app.route({
    ...fastifyRoute(spec.buyCredits),
    handler: async (request) => {
      const cents = request.body.amountUsd * 100;
      if (Math.abs(cents - Math.round(cents)) > 1e-6) throw AiErrors.badCreditAmount('amountUsd');
      return { url: await billing().creditsCheckout(buyer(request), Math.round(cents) / 100) };
    },
  });

  // The wallet page's top-up is buying credits: the same checkout, answered as a redirect.
  app.route({
    ...fastifyRoute(walletRoutes.topUp),
    handler: async (request, reply) => {
      const cents = request.query.amount * 100;
      if (Math.abs(cents - Math.round(cents)) > 1e-6) throw AiErrors.badCreditAmount('amount');
      return seeOther(reply, await billing().creditsCheckout(buyer(request), Math.round(cents) / 100));
    },
  });
}

/** The development provider's own checkout and portal pages (BILLING_PROVIDER=local; any other: refused). */
function developmentPages(app: ServiceApp, deps: BillingRouteDeps, config: AiConfig) {
  const { accounts, activeStatuses, allowances, home, planChanged } = deps;
  const local = () => {
    if (config.BILLING_PROVIDER !== 'local') throw AiErrors.wrongBillingProvider();
  };

  app.route({
    ...fastifyRoute(spec.localCheckoutPage),
    handler: async (request, reply) => {
      local();
      const view = await request.asUser((trx) => localCheckout(trx, request.params.id));
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(localCheckoutPage(view, `${home}/api/billing/local-checkout/${request.params.id}`));
    },
  });

  app.route({
    ...fastifyRoute(spec.localCheckoutComplete),
    handler: async (request, reply) => {
      local();
      const { userId, email } = request.identity;
      const bought = await accounts.completeLocalCheckout(userId!, email, request.params.id);
      if (bought.kind === 'subscription') await planChanged(request, userId!);
      request.log.info(
        { localCheckout: bought.kind, plan: bought.kind === 'subscription' ? bought.plan : undefined },
        'development checkout completed',
      );
      return seeOther(reply, `${home}/dashboard?checkout=success`);
    },
  });

  app.route({
    ...fastifyRoute(spec.localPortalPage),
    handler: async (request, reply) => {
      local();
      const summary = await request.asUser((trx) =>
        billingSummary(trx, request.identity.userId!, { admin: false, activeStatuses, allowances }),
      );
      const subscription =
        summary.subscription &&
        isPlan(summary.subscription.plan) &&
        activeStatuses.includes(summary.subscription.status)
          ? summary.subscription
          : null;
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(localPortalPage(subscription, `${home}/api/billing/local-portal/cancel`, `${home}/dashboard`));
    },
  });

  app.route({
    ...fastifyRoute(spec.localPortalCancel),
    handler: async (request, reply) => {
      local();
      await accounts.cancelLocalSubscription(request.identity.userId!, activeStatuses);
      await planChanged(request, request.identity.userId!);
      return seeOther(reply, `${home}/dashboard?billing=cancelled`);
    },
  });
}
