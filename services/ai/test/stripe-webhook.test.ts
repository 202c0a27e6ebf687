import t from 'tap';
import Stripe from 'stripe';
import { identityHeaders, createUserRow, systemDb } from '@agentyard/testing';
import { backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const secret = 'whsec_test_secret_for_webhooks';
const providers = await startLocalProviders(t);
const app = await build(t, {
  ...providers.env,
  STRIPE_WEBHOOK_SECRET: secret,
  STRIPE_PRICE_COLLECTIVE: 'price_collective',
});
const user = await createUserRow();
const subscriptionId = `sub_${crypto.randomUUID().replace(/-/g, '')}`;

function event(id: string, type: string, created: number, status: string) {
  return {
    id,
    object: 'event',
    type,
    created,
    api_version: '2025-01-01',
    livemode: false,
    pending_webhooks: 0,
    request: null,
    data: {
      object: {
        id: subscriptionId,
        object: 'subscription',
        customer: 'cus_1',
        status,
        metadata: { userId: user.id },
        items: {
          object: 'list',
          data: [
            {
              price: { id: 'price_collective', lookup_key: null, metadata: {} },
              current_period_end: created + 30 * 86400,
            },
          ],
        },
      },
    },
  };
}
function deliver(payload: object, signWith = secret) {
  const body = JSON.stringify(payload);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: signWith });
  return app.inject({
    method: 'POST',
    url: '/api/webhooks/stripe',
    headers: { ...identityHeaders(), 'content-type': 'application/json', 'stripe-signature': signature },
    payload: body,
  });
}
const row = () =>
  systemDb().selectFrom('subscriptions').selectAll().where('id', '=', subscriptionId).executeTakeFirst();
const chat = () =>
  app.inject({
    method: 'POST',
    url: '/api/ai/chat',
    headers: backendHeaders({ userId: user.id, plan: 'collective', subscription: subscriptionId }),
    payload: { messages: [{ role: 'user', content: 'hi' }] },
  });

const now = Math.floor(Date.now() / 1000);

t.test('a forged or unsigned event is refused with 400 and changes nothing', async (t) => {
  const forged = await deliver(
    event('evt_forged', 'customer.subscription.created', now, 'active'),
    'whsec_someone_else',
  );
  t.equal(forged.statusCode, 400);
  t.same(forged.json(), { error: 'Invalid Stripe signature' });
  const unsigned = await app.inject({
    method: 'POST',
    url: '/api/webhooks/stripe',
    headers: { ...identityHeaders(), 'content-type': 'application/json' },
    payload: '{}',
  });
  t.equal(unsigned.statusCode, 400);
  t.equal(await row(), undefined);
  t.equal((await chat()).statusCode, 402);
});

t.test('a signed subscription event syncs the table, and the chat path answers from it', async (t) => {
  const res = await deliver(event('evt_1', 'customer.subscription.created', now, 'active'));
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), { received: true, duplicate: false });
  t.has(await row(), { user_id: user.id, status: 'active', plan: 'collective', customer_id: 'cus_1' });
  t.equal((await chat()).statusCode, 200);
});

t.test('the same event again is acknowledged without effect', async (t) => {
  await systemDb().updateTable('subscriptions').set({ status: 'past_due' }).where('id', '=', subscriptionId).execute();
  const res = await deliver(event('evt_1', 'customer.subscription.created', now, 'active'));
  t.same(res.json(), { received: true, duplicate: true });
  t.equal((await row())!.status, 'past_due');
  await systemDb().updateTable('subscriptions').set({ status: 'active' }).where('id', '=', subscriptionId).execute();
});

t.test('cancellation takes effect; an older event arriving late does not undo it', async (t) => {
  t.equal((await deliver(event('evt_3', 'customer.subscription.deleted', now + 20, 'canceled'))).statusCode, 200);
  t.equal((await row())!.status, 'canceled');
  t.same((await deliver(event('evt_2', 'customer.subscription.updated', now + 10, 'active'))).json(), {
    received: true,
    duplicate: false,
  });
  t.equal((await row())!.status, 'canceled');
  const res = await chat();
  t.equal(res.statusCode, 402);
  t.equal(res.json().code, 'SUBSCRIPTION_REQUIRED');
});
