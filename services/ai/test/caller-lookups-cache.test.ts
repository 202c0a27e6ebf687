import { once } from 'node:events';
import t from 'tap';
import { FreshCache, sql } from '@agentyard/db';
import { hashToken, randomToken } from '@agentyard/crypto';
import { appDb, createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { activeSubscriptionRow, backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// The chat path answers its caller lookups from memory while the database's change notices are
// received; these tests change rows from another connection (as another process would) and check
// the next call sees the change.
const providers = await startLocalProviders(t);
const app = await build(t, providers.env);
const lookups = app.callerLookups;
if (!lookups.cached) await once(lookups.events, 'listening');
const hi = { messages: [{ role: 'user', content: 'hi' }] };
/** Runs a change and resolves once its notice has been applied. */
async function changed(change: () => Promise<unknown>, payload: string): Promise<void> {
  const applied = new Promise<void>((resolve) => {
    const onNotice = (p: string) => {
      if (p === payload) {
        lookups.events.off('notice', onNotice);
        resolve();
      }
    };
    lookups.events.on('notice', onNotice);
  });
  await change();
  await applied;
}

t.test('a subscription cancelled elsewhere stops the next chat', async (t) => {
  const user = await createUserRow({ plan: 'solo' });
  const subscription = await activeSubscriptionRow(user.id, 'solo');
  const chat = () =>
    app.inject({
      method: 'POST',
      url: '/api/ai/chat',
      headers: backendHeaders({ userId: user.id, plan: 'solo', subscription }),
      payload: hi,
    });
  t.equal((await chat()).statusCode, 200);
  t.equal((await chat()).statusCode, 200);
  await changed(
    () => systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', '=', subscription).execute(),
    `subscriptions:${subscription}`,
  );
  const res = await chat();
  t.equal(res.statusCode, 402);
  t.equal(res.json().code, 'SUBSCRIPTION_REQUIRED');
  await changed(
    () => systemDb().updateTable('subscriptions').set({ status: 'active' }).where('id', '=', subscription).execute(),
    `subscriptions:${subscription}`,
  );
  t.equal((await chat()).statusCode, 200, 'renewed counts too');
});

t.test('a hosted agent: a revoked key, a cancelled subscription or a lost plan counts on the next call', async (t) => {
  const user = await createUserRow();
  const subscription = await activeSubscriptionRow(user.id, 'solo');
  const key = `ag_${randomToken()}`;
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'cached',
      model: 'openai/gpt-4o-mini',
      tools_profile: 'messaging',
      subdomain: `c-${crypto.randomUUID().slice(0, 8)}`,
      ai_provider: 'openai',
      ai_key_hash: hashToken(key),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const complete = () =>
    app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { ...identityHeaders({ surface: 'backend' }), authorization: `Bearer ${key}` },
      payload: hi,
    });
  t.equal((await complete()).statusCode, 200);
  t.equal((await complete()).statusCode, 200);

  await changed(
    () => systemDb().updateTable('subscriptions').set({ plan: null }).where('id', '=', subscription).execute(),
    `subscriptions:${subscription}`,
  );
  t.equal((await complete()).json().code, 'SUBSCRIPTION_REQUIRED', 'a subscription naming no plan gives none');
  await changed(
    () => systemDb().updateTable('subscriptions').set({ plan: 'solo' }).where('id', '=', subscription).execute(),
    `subscriptions:${subscription}`,
  );
  t.equal((await complete()).statusCode, 200);

  await changed(
    () => systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', '=', subscription).execute(),
    `subscriptions:${subscription}`,
  );
  t.equal((await complete()).json().code, 'SUBSCRIPTION_REQUIRED');
  await changed(
    () => systemDb().updateTable('subscriptions').set({ status: 'active' }).where('id', '=', subscription).execute(),
    `subscriptions:${subscription}`,
  );
  t.equal((await complete()).statusCode, 200);

  await changed(
    () => systemDb().updateTable('agents').set({ ai_key_hash: null }).where('id', '=', agent.id).execute(),
    `agents:${agent.id}`,
  );
  t.equal((await complete()).statusCode, 401, 'the revoked key stops working');
});

t.test('while the notices are lost nothing is answered from memory', async (t) => {
  const user = await createUserRow({ plan: 'solo' });
  const subscription = await activeSubscriptionRow(user.id, 'solo');
  const chat = () =>
    app.inject({
      method: 'POST',
      url: '/api/ai/chat',
      headers: backendHeaders({ userId: user.id, plan: 'solo', subscription }),
      payload: hi,
    });
  t.equal((await chat()).statusCode, 200);
  const lost = once(lookups.events, 'lost');
  const back = once(lookups.events, 'listening');
  // The listener connects as the runtime role (LISTEN needs no privilege), so that role may end it.
  const { rows } = await sql<{
    ok: boolean;
  }>`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ${`ai-cache-notices-${process.pid}`}`.execute(
    appDb(),
  );
  t.same(
    rows.map((r) => r.ok),
    [true],
  );
  await lost;
  t.equal(lookups.cached, false);
  // Changed while no notice can arrive: the next call still sees it (whether or not the listener is back yet).
  await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', '=', subscription).execute();
  t.equal((await chat()).statusCode, 402);
  await back;
  t.equal(lookups.cached, true);
  await changed(
    () => systemDb().updateTable('subscriptions').set({ status: 'active' }).where('id', '=', subscription).execute(),
    `subscriptions:${subscription}`,
  );
  t.equal((await chat()).statusCode, 200, 'notices flow again');
});

t.test(
  'FreshCache: suspended it always loads and keeps nothing; a load that raced an invalidation is not kept',
  async (t) => {
    const cache = new FreshCache<string>(2);
    let loads = 0;
    const load = (value: string | undefined) => async () => {
      loads++;
      return value;
    };
    t.equal(await cache.get('a', load('1')), '1');
    t.equal(await cache.get('a', load('2')), '2', 'not live yet: every lookup loads');
    t.equal(cache.size, 0);
    cache.resume();
    t.equal(await cache.get('a', load('3')), '3');
    t.equal(await cache.get('a', load('4')), '3', 'live: answered from memory');
    t.equal(await cache.get('missing', load(undefined)), undefined);
    t.equal(await cache.get('missing', load('5')), '5', 'misses are not kept');
    t.equal(await cache.get('b', load('6')), '6');
    t.equal(cache.size, 2, 'bounded: the oldest entry made room');
    cache.suspend();
    t.equal(cache.size, 0);
    t.equal(await cache.get('b', load('7')), '7');
    cache.resume();
    let release!: () => void;
    const racing = cache.get(
      'c',
      () =>
        new Promise<string>((resolve) => {
          release = () => resolve('stale');
        }),
    );
    cache.delete('c');
    release();
    t.equal(await racing, 'stale');
    t.equal(await cache.get('c', load('fresh')), 'fresh', 'the raced value was not kept');
    t.equal(loads, 8);
  },
);

t.test(
  'FreshCache with missTtlMs: a miss stands for its time, bounded, and any invalidation of many forgets it',
  async (t) => {
    let time = 0;
    const cache = new FreshCache<string>(2, { missTtlMs: 100, now: () => time });
    let loads = 0;
    const load = (value: string | undefined) => async () => {
      loads++;
      return value;
    };
    t.equal(await cache.get('x', load(undefined)), undefined);
    t.equal(await cache.get('x', load('1')), '1', 'not live: misses are not kept either');
    cache.resume();
    t.equal(await cache.get('x', load(undefined)), undefined);
    t.equal(await cache.get('x', load('2')), undefined, 'live: the miss stands');
    time = 100;
    t.equal(await cache.get('x', load('3')), '3', 'and ends after missTtlMs');
    t.equal(await cache.get('y', load(undefined)), undefined);
    cache.deleteWhere(() => false);
    t.equal(await cache.get('y', load('4')), '4', 'an invalidation of many forgets every miss');
    for (const key of ['p', 'q', 'r']) await cache.get(key, load(undefined));
    t.equal(await cache.get('p', load('5')), '5', 'bounded: the oldest miss made room');
    t.equal(loads, 10);
  },
);
