import { Type } from 'typebox';
import { Errors, IsoDate, Nullable } from './common.ts';
import type { Plan } from './ai.ts';
import { route } from './route.ts';

/** Monthly plan prices in GBP. */
export const PLAN_PRICES_GBP: Record<Plan, number> = { solo: 29, collective: 69, label: 149, network: 499 };

/** A plan a subscription buys (docs/billing.md). */
export const PaidPlan = Type.Union([
  Type.Literal('solo'),
  Type.Literal('collective'),
  Type.Literal('label'),
  Type.Literal('network'),
]);

/** Credits a user can buy in one checkout, in USD (cents at most). */
export const CREDIT_PURCHASE_USD = { minimum: 5, maximum: 1000 } as const;

export const BillingSubscription = Type.Object({
  status: Type.String(),
  plan: Nullable(Type.String()),
  currentPeriodEnd: Nullable(IsoDate),
  cancelAtPeriodEnd: Type.Boolean(),
});

/** Everything the billing page shows: the plan now, the subscription behind it, credits, this month's use and the user's limit. */
export const Billing = Type.Object({
  /** The plan now (active subscription; admins network); null: none. */
  plan: Nullable(PaidPlan),
  /** The user's most recent subscription, active or not; null: never subscribed. */
  subscription: Nullable(BillingSubscription),
  credits: Type.Object({ balanceUsd: Type.Number() }),
  /** AI spend this month (UTC) and the allowance the plan includes. */
  usage: Type.Object({ monthUsd: Type.Number(), includedUsd: Type.Number() }),
  /** The user's own monthly limit on AI spend; null: none. */
  limits: Type.Object({ monthlyUsd: Nullable(Type.Number()) }),
});

export const CheckoutRequest = Type.Object({ plan: PaidPlan }, { additionalProperties: false });
export const CheckoutQuery = Type.Object({ plan: PaidPlan }, { additionalProperties: false });
export const CreditsCheckoutRequest = Type.Object(
  {
    amountUsd: Type.Number({ ...CREDIT_PURCHASE_USD, description: 'USD, at most two decimals' }),
  },
  { additionalProperties: false },
);

/** Where to send the browser: the payment provider's page (or the development checkout). */
export const RedirectUrl = Type.Object({ url: Type.String() });

/** A Checkout Session id of the payment provider (Stripe `cs_…`) or the development checkout's. */
export const CheckoutSessionId = Type.String({ minLength: 3, maxLength: 255, pattern: '^[A-Za-z0-9_-]+$' });
export const VerifyQuery = Type.Object({ session_id: CheckoutSessionId }, { additionalProperties: false });

/** A checkout's state for the return page. */
export const CheckoutState = Type.Object({
  sessionId: Type.String(),
  /** `open` (not paid yet), `complete` (paid, applied by the webhook), `expired`. */
  status: Type.Union([Type.Literal('open'), Type.Literal('complete'), Type.Literal('expired')]),
  kind: Type.Union([Type.Literal('subscription'), Type.Literal('credits')]),
  plan: Nullable(PaidPlan),
  amountUsd: Nullable(Type.Number()),
});

/** The development checkout's one-time id (in its URL). */
export const LocalCheckoutParams = Type.Object(
  { id: Type.String({ minLength: 20, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) },
  { additionalProperties: false },
);

/** An HTML page (the development checkout and portal). */
export const HtmlPage = Type.String({ description: 'text/html' });
/** A 303 to where the browser goes next; no body. */
export const SeeOther = Type.Null({ description: 'See Other: the Location header names the next page' });

export const billingRoutes = {
  billing: route({
    method: 'GET',
    url: '/api/billing',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: "The plan, subscription, credits, this month's AI spend and allowance, and the spending limit",
    schema: { response: { 200: Billing, ...Errors } },
  }),
  checkout: route({
    method: 'POST',
    url: '/api/billing/checkout',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-billing-provider',
    summary: "Starts a subscription checkout for a plan; answers the checkout page's URL",
    schema: { body: CheckoutRequest, response: { 200: RedirectUrl, ...Errors } },
  }),
  checkoutRedirect: route({
    method: 'GET',
    url: '/api/checkout',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-billing-provider',
    summary: 'Starts a subscription checkout for `plan` and answers 303 to its page',
    schema: { querystring: CheckoutQuery, response: { 303: SeeOther, ...Errors } },
  }),
  checkoutVerify: route({
    method: 'GET',
    url: '/api/checkout/verify',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-billing-provider',
    summary: "The state of one of the caller's checkouts, for the return page",
    schema: { querystring: VerifyQuery, response: { 200: CheckoutState, ...Errors } },
  }),
  portal: route({
    method: 'POST',
    url: '/api/billing/portal',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-billing-provider',
    summary: "The payment provider's customer portal (plan changes, cancellation, invoices); answers its URL",
    schema: { response: { 200: RedirectUrl, ...Errors } },
  }),
  buyCredits: route({
    method: 'POST',
    url: '/api/billing/credits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-billing-provider',
    summary: "Starts a one-time checkout for AI credits; answers the checkout page's URL",
    schema: { body: CreditsCheckoutRequest, response: { 200: RedirectUrl, ...Errors } },
  }),
  localCheckoutPage: route({
    method: 'GET',
    url: '/api/billing/local-checkout/:id',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Development checkout (BILLING_PROVIDER=local): shows what is bought and a button to complete it',
    schema: { params: LocalCheckoutParams, response: { 200: HtmlPage, ...Errors } },
  }),
  localCheckoutComplete: route({
    method: 'POST',
    url: '/api/billing/local-checkout/:id',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Completes a development checkout (writes what the Stripe webhook would), then 303 to the dashboard',
    schema: { params: LocalCheckoutParams, response: { 303: SeeOther, ...Errors } },
  }),
  localPortalPage: route({
    method: 'GET',
    url: '/api/billing/local-portal',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Development customer portal (BILLING_PROVIDER=local): the subscription and a button to cancel it',
    schema: { response: { 200: HtmlPage, ...Errors } },
  }),
  localPortalCancel: route({
    method: 'POST',
    url: '/api/billing/local-portal/cancel',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: 'Cancels the subscription in the development portal, then 303 to the dashboard',
    schema: { response: { 303: SeeOther, ...Errors } },
  }),
};
