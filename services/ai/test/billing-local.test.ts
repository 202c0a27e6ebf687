import t from 'tap';
import type Stripe from 'stripe';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { loadAiConfig } from '../src/config.ts';
import { applyStripeEvent } from '../src/domain/privileged/subscriptions.ts';
import { build } from './helper.ts';

// BILLING_PROVIDER=local, the default without Stripe keys outside production: the checkout is a
// page of the platform itself that says it is a development checkout; its button writes exactly
// what the Stripe webhook would.
const home = 'http://platform.test';
const app = await build(t, {
  PUBLIC_BASE_URL: home,
  SPENDING_ENFORCED: 'false',
  STRIPE_SECRET_KEY: '',
  BILLING_PROVIDER: '',
});

const web = (user: { id: string; email: string }) =>
  identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email });
const billing = async (user: { id: string; email: string }) =>
  (await app.inject({ method: 'GET', url: '/api/billing', headers: web(user) })).json();
const pathOf = (url: string) => url.slice(home.length);
const checkout = async (user: { id: string; email: string }, url: string, payload: object) => {
  const res = await app.inject({ method: 'POST', url, headers: web(user), payload });
  t.equal(res.statusCode, 200, res.body);
  return res.json().url as string;
};
// What a browser sends for the page's form: an empty urlencoded body.
const submit = (user: { id: string; email: string }, url: string) =>
  app.inject({
    method: 'POST',
    url: pathOf(url),
    headers: { ...web(user), 'content-type': 'application/x-www-form-urlencoded', origin: home },
    payload: '',
  });
const subscriptionRow = (userId: string) =>
  systemDb().selectFrom('subscriptions').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();

t.test('without Stripe keys outside production the provider is local; production refuses local', async (t) => {
  t.equal(
    loadAiConfig({ ...process.env, NODE_ENV: 'development', STRIPE_SECRET_KEY: '', BILLING_PROVIDER: '' })
      .BILLING_PROVIDER,
    'local',
  );
  t.equal(
    loadAiConfig({
      ...process.env,
      NODE_ENV: 'development',
      STRIPE_SECRET_KEY: 'sk_test_12345678',
      BILLING_PROVIDER: '',
    }).BILLING_PROVIDER,
    'stripe',
  );
  t.throws(
    () => loadAiConfig({ ...process.env, NODE_ENV: 'production', BILLING_PROVIDER: 'local' }),
    /BILLING_PROVIDER: local is a development checkout and is refused under NODE_ENV=production/,
  );
  t.throws(
    () => loadAiConfig({ ...process.env, NODE_ENV: 'production', BILLING_PROVIDER: '', STRIPE_SECRET_KEY: '' }),
    /STRIPE_SECRET_KEY: required/,
    'production without a key does not fall back to local',
  );
  t.equal(
    loadAiConfig({
      ...process.env,
      NODE_ENV: 'production',
      BILLING_PROVIDER: '',
      STRIPE_SECRET_KEY: 'sk_live_12345678',
    }).BILLING_PROVIDER,
    'stripe',
  );
});

t.test(
  "subscribe: the development page, its button, a solo plan; the checkout is single-use and the user's own",
  async (t) => {
    const user = await createUserRow();
    const url = await checkout(user, '/api/billing/checkout', { plan: 'solo' });
    t.match(url, new RegExp(`^${home}/api/billing/local-checkout/[A-Za-z0-9_-]{20,}$`), 'a URL on the platform itself');

    const page = await app.inject({ method: 'GET', url: pathOf(url), headers: web(user) });
    t.equal(page.statusCode, 200);
    t.match(page.headers['content-type'], /^text\/html/);
    t.match(page.body, /DEVELOPMENT checkout/);
    t.match(page.body, /Plan: <strong>solo<\/strong> — £29 per month/);
    t.match(page.body, new RegExp(`<form method="post" action="${url}">`), 'its button posts to the same URL');

    const stranger = await createUserRow();
    t.equal(
      (await app.inject({ method: 'GET', url: pathOf(url), headers: web(stranger) })).statusCode,
      404,
      'another user cannot see it',
    );
    t.equal((await submit(stranger, url)).statusCode, 404, 'nor complete it');
    t.same(await billing(stranger), {
      plan: null,
      subscription: null,
      credits: { balanceUsd: 0 },
      usage: { monthUsd: 0, includedUsd: 0 },
      limits: { monthlyUsd: null },
    });
    t.equal((await billing(user)).plan, null, 'nothing before the button');

    const done = await submit(user, url);
    t.equal(done.statusCode, 303);
    t.equal(done.headers.location, `${home}/dashboard?checkout=success`);
    t.match(await billing(user), {
      plan: /^solo$/,
      subscription: { status: /^active$/, plan: /^solo$/, cancelAtPeriodEnd: false, currentPeriodEnd: String },
      usage: { includedUsd: 5 },
    });

    const twice = await submit(user, url);
    t.equal(twice.statusCode, 410, 'single-use');
    t.match((await app.inject({ method: 'GET', url: pathOf(url), headers: web(user) })).body, /already completed/);
    t.equal(
      (await systemDb().selectFrom('subscriptions').select('id').where('user_id', '=', user.id).execute()).length,
      1,
    );
    const again = await app.inject({
      method: 'POST',
      url: '/api/billing/checkout',
      headers: web(user),
      payload: { plan: 'label' },
    });
    t.equal(again.statusCode, 409);
  },
);

t.test("the rows equal the Stripe webhook's for the same purchase", async (t) => {
  const local = await createUserRow();
  await submit(local, await checkout(local, '/api/billing/checkout', { plan: 'collective' }));
  await submit(local, await checkout(local, '/api/billing/credits', { amountUsd: 15 }));

  const viaStripe = await createUserRow();
  const created = Math.floor(Date.now() / 1000);
  const subscription = {
    id: `sub_${viaStripe.id.slice(0, 8)}`,
    object: 'subscription',
    status: 'active',
    customer: `cus_${viaStripe.id.slice(0, 8)}`,
    cancel_at_period_end: false,
    metadata: { userId: viaStripe.id, plan: 'collective' },
    items: {
      object: 'list',
      data: [
        { current_period_end: created + 30 * 86400, price: { id: 'price_collective', lookup_key: null, metadata: {} } },
      ],
    },
  };
  const session = {
    id: `cs_${viaStripe.id.slice(0, 8)}`,
    object: 'checkout.session',
    mode: 'payment',
    payment_status: 'paid',
    status: 'complete',
    client_reference_id: viaStripe.id,
    customer: subscription.customer,
    customer_details: { email: viaStripe.email },
    metadata: { kind: 'credits', userId: viaStripe.id },
    amount_total: 1500,
    payment_intent: `pi_${viaStripe.id.slice(0, 8)}`,
  };
  const event = (id: string, type: string, object: object) =>
    ({ id, object: 'event', type, created, data: { object } }) as unknown as Stripe.Event;
  const context = {
    prices: { solo: '', collective: 'price_collective', label: '', network: '' },
    log: { warn: () => undefined },
  };
  await applyStripeEvent(
    systemDb(),
    event(`evt_s_${viaStripe.id}`, 'customer.subscription.created', subscription),
    context,
  );
  await applyStripeEvent(systemDb(), event(`evt_c_${viaStripe.id}`, 'checkout.session.completed', session), context);

  const shape = async (userId: string) => {
    const sub = await subscriptionRow(userId);
    const customer = await systemDb()
      .selectFrom('billing_customers')
      .select(['customer_id'])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const credits = await systemDb()
      .selectFrom('credit_entries')
      .select(['kind', 'amount_usd', 'note', 'source'])
      .where('user_id', '=', userId)
      .execute();
    return {
      subscription: {
        status: sub.status,
        plan: sub.plan,
        cancelAtPeriodEnd: sub.cancel_at_period_end,
        hasPeriodEnd: sub.current_period_end !== null,
        customerIsTheUsers: sub.customer_id === customer.customer_id,
      },
      credits: credits.map((c) => ({
        kind: c.kind,
        amount: c.amount_usd,
        note: c.note,
        source: c.source.split(':')[0],
      })),
    };
  };
  t.same(await shape(local.id), await shape(viaStripe.id));
  t.same((await shape(local.id)).credits, [
    { kind: 'purchase', amount: '15.00000000', note: 'Credits purchase', source: 'payment' },
  ]);
  t.has(await billing(local), { plan: 'collective', credits: { balanceUsd: 15 } });
});

t.test('credits: the page shows the amount; an expired checkout cannot be completed', async (t) => {
  const user = await createUserRow();
  const url = await checkout(user, '/api/billing/credits', { amountUsd: 7.25 });
  const page = await app.inject({ method: 'GET', url: pathOf(url), headers: web(user) });
  t.match(page.body, /AI credits: <strong>\$7\.25<\/strong>/);
  t.match(page.body, /DEVELOPMENT checkout/);
  await systemDb()
    .updateTable('local_checkouts')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('user_id', '=', user.id)
    .execute();
  const late = await submit(user, url);
  t.equal(late.statusCode, 410);
  t.equal(late.json().code, 'CHECKOUT_GONE');
  t.match((await app.inject({ method: 'GET', url: pathOf(url), headers: web(user) })).body, /expired/);
  t.equal((await billing(user)).credits.balanceUsd, 0);
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: '/api/billing/local-checkout/not-a-real-checkout-id-000',
        headers: web(user),
      })
    ).statusCode,
    404,
  );
});

t.test("the return page: the checkout's state by its session id", async (t) => {
  const user = await createUserRow();
  const url = await checkout(user, '/api/billing/checkout', { plan: 'label' });
  const { session_id: sessionId } = await systemDb()
    .selectFrom('local_checkouts')
    .select('session_id')
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  const verify = (who: { id: string; email: string }) =>
    app.inject({ method: 'GET', url: `/api/checkout/verify?session_id=${sessionId}`, headers: web(who) });
  t.same((await verify(user)).json(), {
    sessionId,
    status: 'open',
    kind: 'subscription',
    plan: 'label',
    amountUsd: null,
  });
  await submit(user, url);
  t.has((await verify(user)).json(), { status: 'complete' });
  t.equal((await verify(await createUserRow())).statusCode, 404);
});

t.test('the development portal lets the user cancel; the plan is gone at once', async (t) => {
  const user = await createUserRow();
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/billing/portal', headers: web(user) })).statusCode,
    409,
    'no billing account yet',
  );
  await submit(user, await checkout(user, '/api/billing/checkout', { plan: 'solo' }));
  const portal = await app.inject({ method: 'POST', url: '/api/billing/portal', headers: web(user) });
  t.same(portal.json(), { url: `${home}/api/billing/local-portal` });
  const page = await app.inject({ method: 'GET', url: '/api/billing/local-portal', headers: web(user) });
  t.match(page.body, /DEVELOPMENT portal/);
  t.match(page.body, /Subscription: <strong>solo<\/strong>, active/);
  const cancel = await app.inject({
    method: 'POST',
    url: '/api/billing/local-portal/cancel',
    headers: { ...web(user), 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  });
  t.equal(cancel.statusCode, 303);
  t.has(await billing(user), { plan: null, subscription: { status: 'canceled', plan: 'solo' } });
  t.match(
    (await app.inject({ method: 'GET', url: '/api/billing/local-portal', headers: web(user) })).body,
    /No active subscription/,
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/billing/local-portal/cancel', headers: web(user) })).statusCode,
    409,
  );
});

t.test('with the Stripe provider the development pages do not exist', async (t) => {
  const stripeApp = await build(t, {
    BILLING_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: 'sk_test_12345678',
    STRIPE_API_BASE: 'http://127.0.0.1:9',
    PUBLIC_BASE_URL: home,
    SPENDING_ENFORCED: 'false',
  });
  const user = await createUserRow();
  t.equal(
    (await stripeApp.inject({ method: 'GET', url: '/api/billing/local-portal', headers: web(user) })).statusCode,
    404,
  );
  t.equal(
    (
      await stripeApp.inject({
        method: 'POST',
        url: '/api/billing/local-checkout/abcdefghijklmnopqrstuvwxyz',
        headers: web(user),
      })
    ).statusCode,
    404,
  );
});

t.test("the wallet's top-up is the credits checkout: 303 to it, and its button adds the credits", async (t) => {
  const user = await createUserRow();
  const res = await app.inject({ method: 'GET', url: '/api/wallet/top-up?amount=12.5', headers: web(user) });
  t.equal(res.statusCode, 303);
  const url = res.headers.location as string;
  t.match(url, new RegExp(`^${home}/api/billing/local-checkout/[A-Za-z0-9_-]{20,}$`));
  t.match((await app.inject({ method: 'GET', url: pathOf(url), headers: web(user) })).body, /DEVELOPMENT checkout/);
  t.equal((await submit(user, url)).statusCode, 303);
  t.same((await billing(user)).credits, { balanceUsd: 12.5 });
  const odd = await app.inject({ method: 'GET', url: '/api/wallet/top-up?amount=12.345', headers: web(user) });
  t.equal(odd.statusCode, 400);
  t.match(odd.json(), { error: 'amount must have at most two decimals' });
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/wallet/top-up?amount=1', headers: web(user) })).statusCode,
    400,
    'below the smallest purchase',
  );
});
