import t from 'tap';
import Stripe from 'stripe';
import { createUserRow, identityHeaders, startStripeServer, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

// Billing with BILLING_PROVIDER=stripe: the official client talks to a local server speaking the
// Stripe API; what Stripe then sends (signed webhooks) sets the plan and the credits.
// The account sells more than the platform's plans: the portal must offer only the platform's prices.
const stripe = await startStripeServer({
  prices: {
    price_solo_monthly: 'prod_agentyard',
    price_collective_monthly: 'prod_agentyard',
    price_other_product: 'prod_someone_else',
  },
});
t.teardown(() => stripe.close());
const webhookSecret = 'whsec_billing_test_secret';
const home = 'http://platform.test';
const app = await build(t, {
  BILLING_PROVIDER: 'stripe',
  STRIPE_SECRET_KEY: stripe.secretKey,
  STRIPE_API_BASE: stripe.url,
  STRIPE_WEBHOOK_SECRET: webhookSecret,
  STRIPE_PRICE_SOLO: 'price_solo_monthly',
  STRIPE_PRICE_COLLECTIVE: 'price_collective_monthly',
  PUBLIC_BASE_URL: home,
  SPENDING_ENFORCED: 'false',
});

const web = (user: { id: string; email: string }) =>
  identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email });
const deliver = (event: object) => {
  const payload = JSON.stringify(event);
  return app.inject({
    method: 'POST',
    url: '/api/webhooks/stripe',
    payload,
    headers: {
      ...identityHeaders(),
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }),
    },
  });
};
const billing = async (user: { id: string; email: string }) =>
  (await app.inject({ method: 'GET', url: '/api/billing', headers: web(user) })).json();
const sessionIdOf = (url: string) => url.split('/').at(-1)!;
const lastRequest = (path: string) => stripe.requests.filter((r) => r.path === path).at(-1)!;
const entries = (userId: string) =>
  systemDb()
    .selectFrom('credit_entries')
    .select(['kind', 'amount_usd', 'note', 'source'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();

t.test('a new user has no plan, no subscription, no credits', async (t) => {
  const user = await createUserRow();
  t.same(await billing(user), {
    plan: null,
    subscription: null,
    credits: { balanceUsd: 0 },
    usage: { monthUsd: 0, includedUsd: 0 },
    limits: { monthlyUsd: null },
  });
});

t.test(
  "checkout: a Stripe Checkout Session for the plan's price; paying it (signed webhooks) makes the plan",
  async (t) => {
    const user = await createUserRow();
    const res = await app.inject({
      method: 'POST',
      url: '/api/billing/checkout',
      headers: web(user),
      payload: { plan: 'solo' },
    });
    t.equal(res.statusCode, 200, res.body);
    const { url } = res.json();
    t.match(url, new RegExp(`^${stripe.url}/c/pay/cs_test_`), 'the checkout page Stripe answered');

    t.match(
      lastRequest('/v1/customers').form,
      { email: user.email, metadata: { userId: user.id } },
      'a customer for the user',
    );
    const created = lastRequest('/v1/checkout/sessions');
    t.match(
      created.form,
      {
        mode: /^subscription$/,
        client_reference_id: user.id,
        customer: /^cus_/,
        line_items: [{ price: /^price_solo_monthly$/, quantity: /^1$/ }],
        success_url: `${home}/dashboard?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
        cancel_url: `${home}/dashboard?checkout=cancel`,
        metadata: { userId: user.id, plan: /^solo$/ },
        subscription_data: { metadata: { userId: user.id, plan: /^solo$/ } },
      },
      'the form body Stripe expects',
    );

    const sessionId = sessionIdOf(url);
    const verify = (who: { id: string; email: string }, id = sessionId) =>
      app.inject({ method: 'GET', url: `/api/checkout/verify?session_id=${id}`, headers: web(who) });
    t.same((await verify(user)).json(), {
      sessionId,
      status: 'open',
      kind: 'subscription',
      plan: 'solo',
      amountUsd: null,
    });
    const stranger = await createUserRow();
    t.equal((await verify(stranger)).statusCode, 404, "another user's session is not found");
    t.equal((await verify(user, 'cs_test_nope')).statusCode, 404, "an unknown session: Stripe's 404 becomes ours");

    const events = stripe.pay(sessionId);
    for (const event of events) {
      const delivered = await deliver(event);
      t.same(delivered.json(), { received: true, duplicate: false }, (event as { type: string }).type);
    }
    t.match(await billing(user), {
      plan: /^solo$/,
      subscription: { status: /^active$/, plan: /^solo$/, currentPeriodEnd: String, cancelAtPeriodEnd: false },
      usage: { includedUsd: 5 },
    });
    t.has((await verify(user)).json(), { status: 'complete' });
    const again = await app.inject({
      method: 'POST',
      url: '/api/billing/checkout',
      headers: web(user),
      payload: { plan: 'label' },
    });
    t.equal(again.statusCode, 409, 'a second subscription is refused: plan changes go through the portal');
    t.equal(again.json().code, 'ALREADY_SUBSCRIBED');

    const customers = stripe.requests.filter(
      (r) =>
        r.path === '/v1/customers' && r.form.metadata && (r.form.metadata as { userId?: string }).userId === user.id,
    );
    t.equal(customers.length, 1, 'one Stripe customer per user');
    const dashboard = await app.inject({ method: 'GET', url: '/api/dashboard/cost', headers: web(user) });
    t.equal(dashboard.json().plan, 'solo', 'the cost dashboard follows the subscription');

    const subscriptionCreated = events.at(-1) as { created: number; data: { object: Record<string, unknown> } };
    const deleted = {
      ...subscriptionCreated,
      id: `evt_deleted_${sessionId}`,
      type: 'customer.subscription.deleted',
      created: subscriptionCreated.created + 5,
      data: { object: { ...subscriptionCreated.data.object, status: 'canceled' } },
    };
    t.equal((await deliver(deleted)).statusCode, 200);
    t.has(await billing(user), { plan: null, subscription: { status: 'canceled' } }, 'cancellation drops the plan');
  },
);

t.test('GET /api/checkout answers 303 to the Checkout page; bad plans are 400 and start nothing', async (t) => {
  const user = await createUserRow();
  const before = stripe.requests.length;
  for (const plan of ['free', 'enterprise', '']) {
    const res = await app.inject({ method: 'GET', url: `/api/checkout?plan=${plan}`, headers: web(user) });
    t.equal(res.statusCode, 400, plan);
    t.match(res.json(), { error: String });
  }
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/billing/checkout',
        headers: web(user),
        payload: { plan: 'solo', price: 'price_x' },
      })
    ).statusCode,
    400,
    'no extra fields',
  );
  t.equal(stripe.requests.length, before, 'no Stripe call for bad input');
  const res = await app.inject({ method: 'GET', url: '/api/checkout?plan=collective', headers: web(user) });
  t.equal(res.statusCode, 303);
  t.match(res.headers.location, new RegExp(`^${stripe.url}/c/pay/cs_test_`));
  t.has(lastRequest('/v1/checkout/sessions').form, {
    line_items: [{ price: 'price_collective_monthly' }],
    client_reference_id: user.id,
  });
  const unpriced = await app.inject({
    method: 'POST',
    url: '/api/billing/checkout',
    headers: web(user),
    payload: { plan: 'network' },
  });
  t.equal(unpriced.statusCode, 503, 'a plan without a configured price');
});

t.test("the customer portal: Stripe's, for the user's customer; none before any checkout", async (t) => {
  const user = await createUserRow();
  const none = await app.inject({ method: 'POST', url: '/api/billing/portal', headers: web(user) });
  t.equal(none.statusCode, 409);
  t.equal(none.json().code, 'NO_BILLING_ACCOUNT');
  await app.inject({ method: 'POST', url: '/api/billing/checkout', headers: web(user), payload: { plan: 'solo' } });
  const customer = lastRequest('/v1/checkout/sessions').form.customer;
  const res = await app.inject({ method: 'POST', url: '/api/billing/portal', headers: web(user) });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json().url, new RegExp(`^${stripe.url}/p/session/bps_`));
  const configurations = [...stripe.portalConfigurations.values()];
  t.equal(configurations.length, 1, 'one portal configuration of our own');
  const ours = configurations[0]! as {
    id: string;
    features: { subscription_update: { enabled: string; products: { product: string; prices: string[] }[] } };
  };
  t.same(
    lastRequest('/v1/billing_portal/sessions').form,
    { customer, return_url: `${home}/dashboard`, configuration: ours.id },
    'the session uses it',
  );
  t.same(
    ours.features.subscription_update,
    {
      enabled: 'true',
      default_allowed_updates: ['price'],
      proration_behavior: 'create_prorations',
      products: [{ product: 'prod_agentyard', prices: ['price_collective_monthly', 'price_solo_monthly'] }],
    },
    "plan changes only to the platform's own prices",
  );
  await app.inject({ method: 'POST', url: '/api/billing/portal', headers: web(user) });
  t.equal(stripe.portalConfigurations.size, 1, 'a second portal reuses it');
  t.equal(lastRequest('/v1/billing_portal/sessions').form.configuration, ours.id);
});

t.test("a plan change in the portal: the plan is the price's, whatever the subscription's metadata says", async (t) => {
  const user = await createUserRow();
  const { url } = (
    await app.inject({
      method: 'POST',
      url: '/api/billing/checkout',
      headers: web(user),
      payload: { plan: 'collective' },
    })
  ).json();
  const events = stripe.pay(sessionIdOf(url));
  for (const event of events) await deliver(event);
  t.has(await billing(user), { plan: 'collective' });
  const created = events.at(-1) as {
    created: number;
    data: { object: { items: { data: { price: object }[] } } & Record<string, unknown> };
  };
  const billedAt = (price: string, n: number) => ({
    ...created,
    id: `evt_price_${n}_${user.id}`,
    type: 'customer.subscription.updated',
    created: created.created + n,
    data: {
      object: {
        ...created.data.object,
        metadata: { userId: user.id, plan: 'network' },
        items: {
          object: 'list',
          data: [
            {
              ...created.data.object.items.data[0],
              price: { id: price, object: 'price', metadata: { plan: 'network' }, lookup_key: 'network' },
            },
          ],
        },
      },
    },
  });
  t.equal((await deliver(billedAt('price_solo_monthly', 1))).statusCode, 200);
  t.has(
    await billing(user),
    { plan: 'solo', subscription: { plan: 'solo' } },
    "metadata says network, the price is solo's: solo",
  );
  t.equal((await deliver(billedAt('price_other_product', 2))).statusCode, 200);
  t.match(await billing(user), { plan: null }, 'a price that is none of our plans: no paid plan');
});

t.test(
  'credits: a one-time Checkout; the paid purchase is one ledger entry, once; refunds and disputes take it back',
  async (t) => {
    const user = await createUserRow();
    for (const amountUsd of [4.99, 1000.01, 10.005, -5]) {
      const bad = await app.inject({
        method: 'POST',
        url: '/api/billing/credits',
        headers: web(user),
        payload: { amountUsd },
      });
      t.equal(bad.statusCode, 400, String(amountUsd));
    }
    const buy = async (amountUsd: number) => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/billing/credits',
        headers: web(user),
        payload: { amountUsd },
      });
      t.equal(res.statusCode, 200, res.body);
      return sessionIdOf(res.json().url);
    };
    const first = await buy(12.5);
    t.match(lastRequest('/v1/checkout/sessions').form, {
      mode: /^payment$/,
      client_reference_id: user.id,
      metadata: { kind: /^credits$/, userId: user.id, amountUsd: /^12\.50$/ },
      line_items: [
        {
          quantity: /^1$/,
          price_data: { currency: /^usd$/, unit_amount: /^1250$/, product_data: { name: 'AI credits' } },
        },
      ],
    });
    t.same(
      (await app.inject({ method: 'GET', url: `/api/checkout/verify?session_id=${first}`, headers: web(user) })).json(),
      {
        sessionId: first,
        status: 'open',
        kind: 'credits',
        plan: null,
        amountUsd: 12.5,
      },
    );
    t.same(await entries(user.id), [], 'nothing before payment');

    const [completed] = stripe.pay(first);
    t.same((await deliver(completed!)).json(), { received: true, duplicate: false });
    t.same((await deliver(completed!)).json(), { received: true, duplicate: true }, 'the same event again');
    t.same(
      (await deliver({ ...completed!, id: `${(completed as { id: string }).id}_resent` })).json(),
      { received: true, duplicate: false },
      'a different event for the same payment',
    );
    t.equal((await billing(user)).credits.balanceUsd, 12.5, 'credited once');
    t.match(await entries(user.id), [
      { kind: /^purchase$/, amount_usd: /^12\.50000000$/, note: 'Credits purchase', source: /^payment:stripe:pi_/ },
    ]);

    t.equal((await deliver(stripe.refund(first, 500))).statusCode, 200, 'a partial refund');
    t.equal((await billing(user)).credits.balanceUsd, 7.5);
    const full = stripe.refund(first);
    t.equal((await deliver(full)).statusCode, 200);
    t.same((await deliver(full)).json(), { received: true, duplicate: true });
    t.equal((await billing(user)).credits.balanceUsd, 0, 'fully refunded: all of it taken back, never more');
    t.same(
      (await entries(user.id)).map((e) => [e.kind, e.amount_usd]),
      [
        ['purchase', '12.50000000'],
        ['refund', '-5.00000000'],
        ['refund', '-7.50000000'],
      ],
    );

    const second = await buy(20);
    for (const event of stripe.pay(second)) await deliver(event);
    t.equal((await billing(user)).credits.balanceUsd, 20);
    await deliver(stripe.dispute(second));
    await deliver(stripe.refund(second));
    t.equal(
      (await billing(user)).credits.balanceUsd,
      0,
      'a dispute takes the purchase back; a refund after it takes nothing more',
    );
  },
);

t.test("Stripe refusing the platform's key is a 502 with a plain message, not a 500", async (t) => {
  const wrongKey = await build(t, {
    BILLING_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: 'sk_test_not_the_right_one',
    STRIPE_API_BASE: stripe.url,
    STRIPE_PRICE_SOLO: 'price_solo_monthly',
    PUBLIC_BASE_URL: home,
    SPENDING_ENFORCED: 'false',
  });
  const user = await createUserRow();
  const res = await wrongKey.inject({
    method: 'POST',
    url: '/api/billing/checkout',
    headers: web(user),
    payload: { plan: 'solo' },
  });
  t.equal(res.statusCode, 502);
  t.same(res.json(), { error: 'The payment provider did not answer, try again shortly' });
});
