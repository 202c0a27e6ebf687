import type { FastifyReply, FastifyRequest } from 'fastify';
import { activeStatusesOf, isPlan, type Plan } from '@agentyard/db';
import type { ServiceApp } from '@agentyard/http';
import { billingRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';
import type { AiConfig } from '../config.ts';
import { AiErrors } from '../errors.ts';
import { cancelLocalSubscription, completeLocalCheckout, localCheckout } from '../domain/billing/local-checkout.ts';
import { localCheckoutPage, localPortalPage } from '../domain/billing/local-pages.ts';
import { localProvider, stripeProvider, type BillingProvider, type Buyer } from '../domain/billing/providers.ts';
import { createStripeClient } from '../domain/billing/stripe-client.ts';
import { billingSummary, hasActiveSubscription } from '../domain/billing/summary.ts';
import { parseAllowances } from '../domain/spending/index.ts';

/** Billing on the web surface: the summary, checkouts, the portal, and the development provider's pages. */
export default async function billingRoutesPlugin(app: ServiceApp, { config }: { config: AiConfig }) {
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const allowances = parseAllowances(config.PLAN_MONTHLY_ALLOWANCE_USD);
  const home = config.PUBLIC_BASE_URL.replace(/\/$/, '');
  const settings = {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    localCheckoutTtlSeconds: config.LOCAL_CHECKOUT_TTL_SECONDS,
    log: app.log,
    prices: { solo: config.STRIPE_PRICE_SOLO, collective: config.STRIPE_PRICE_COLLECTIVE, label: config.STRIPE_PRICE_LABEL, network: config.STRIPE_PRICE_NETWORK } satisfies Record<Plan, string>,
  };
  const stripe = config.BILLING_PROVIDER === 'stripe' ? createStripeClient(config) : null;
  const provider: BillingProvider | null = config.BILLING_PROVIDER === 'local' ? localProvider(settings) : stripe ? stripeProvider(stripe, settings) : null;
  /** The configured provider; BILLING_PROVIDER=stripe without a key (outside production) has none: 503. */
  const billing = (): BillingProvider => {
    if (!provider) throw AiErrors.billingNotConfigured();
    return provider;
  };
  const buyer = (request: FastifyRequest): Buyer => ({ id: request.identity.userId!, email: request.identity.email, asUser: (work) => request.asUser(work) });
  const local = () => {
    if (config.BILLING_PROVIDER !== 'local') throw AiErrors.wrongBillingProvider();
  };

  // The development pages post plain forms (a button, no fields).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));

  async function subscriptionCheckout(request: FastifyRequest, plan: Plan): Promise<string> {
    if (await request.asUser((trx) => hasActiveSubscription(trx, request.identity.userId!, activeStatuses))) throw AiErrors.alreadySubscribed();
    return billing().subscriptionCheckout(buyer(request), plan);
  }
  const seeOther = (reply: FastifyReply, url: string) => reply.code(303).header('location', url).send();

  app.route({
    ...fastifyRoute(spec.billing),
    handler: async (request) => request.asUser((trx) => billingSummary(trx, request.identity.userId!, { admin: request.identity.admin, activeStatuses, allowances })),
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
      if (Math.abs(cents - Math.round(cents)) > 1e-6) throw AiErrors.badCreditAmount();
      return { url: await billing().creditsCheckout(buyer(request), Math.round(cents) / 100) };
    },
  });

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
      const bought = await request.asUser((trx) => completeLocalCheckout(trx, userId!, email, request.params.id));
      request.log.info({ localCheckout: bought.kind, plan: bought.kind === 'subscription' ? bought.plan : undefined }, 'development checkout completed');
      return seeOther(reply, `${home}/dashboard?checkout=success`);
    },
  });

  app.route({
    ...fastifyRoute(spec.localPortalPage),
    handler: async (request, reply) => {
      local();
      const summary = await request.asUser((trx) => billingSummary(trx, request.identity.userId!, { admin: false, activeStatuses, allowances }));
      const subscription = summary.subscription && isPlan(summary.subscription.plan) && activeStatuses.includes(summary.subscription.status) ? summary.subscription : null;
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
      await request.asUser((trx) => cancelLocalSubscription(trx, request.identity.userId!, activeStatuses));
      return seeOther(reply, `${home}/dashboard?billing=cancelled`);
    },
  });
}
