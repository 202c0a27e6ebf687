import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

// A local server speaking the trading service's API: prompt → job id (and its thread) → job status;
// balances by chain. Like the real one, a job belongs to the key that started it: polling it with
// another key is 404; a prompt without a thread starts one, a prompt naming one continues it.
const seen: { method: string; url: string; key: string | undefined; body: unknown }[] = [];
const jobKeys = new Map<string, string | undefined>();
const jobThreads = new Map<string, string>();
let mode: 'ok' | 'fail' | 'hang' = 'ok';
const upstream = createServer(async (req: IncomingMessage, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const key = req.headers['x-api-key'] as string | undefined;
  seen.push({ method: req.method!, url: req.url!, key, body: raw ? JSON.parse(raw) : undefined });
  if (mode === 'hang') return;
  if (mode === 'fail') {
    res.writeHead(500, { 'content-type': 'application/json' });
    return res.end('{"error":"boom"}');
  }
  res.setHeader('content-type', 'application/json');
  if (req.method === 'POST' && req.url === '/agent/prompt') {
    const jobId = `job_${randomUUID().replace(/-/g, '')}`;
    jobKeys.set(jobId, key);
    const threadId = (JSON.parse(raw) as { threadId?: string }).threadId ?? `thread_${randomUUID()}`;
    jobThreads.set(jobId, threadId);
    return res.end(JSON.stringify({ success: true, jobId, threadId, status: 'pending' }));
  }
  const job = /^\/agent\/job\/([^/?]+)$/.exec(req.url ?? '')?.[1];
  if (job && jobKeys.has(job) && jobKeys.get(job) === key)
    return res.end(
      JSON.stringify({
        success: true,
        jobId: job,
        threadId: jobThreads.get(job),
        status: 'completed',
        response: 'done',
      }),
    );
  if (req.url?.startsWith('/agent/balances'))
    return res.end(JSON.stringify({ chains: new URL(req.url, 'http://x').searchParams.get('chains')!.split(',') }));
  res.writeHead(404).end('{"error":"Job not found"}');
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
t.teardown(() => {
  upstream.closeAllConnections();
  upstream.close();
});
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

/** A user with an active (or other) subscription to `plan`, as the payment provider's webhooks leave it. */
async function subscriber(plan: string | null, status = 'active') {
  const user = await createUserRow();
  if (plan)
    await systemDb()
      .insertInto('subscriptions')
      .values({ id: `sub_${randomUUID()}`, user_id: user.id, status, plan })
      .execute();
  return user;
}
const as = (user: { id: string; email: string }, admin = false) =>
  identityHeaders({ userId: user.id, email: user.email, admin });
const noPlatformKey = { TRADER_API_URL: upstreamUrl, TRADER_API_KEY: undefined, TRADER_TIMEOUT_MS: '500' };
const withPlatformKey = { ...noPlatformKey, TRADER_API_KEY: 'platform-key-123' };

t.test('without any key: 503 needsKey; with the platform key: relayed for a paid plan', async (t) => {
  const user = await subscriber('solo');
  const app = await build(t, noPlatformKey);
  const res = await app.inject({
    method: 'POST',
    url: '/api/trader/prompt',
    headers: as(user),
    payload: { prompt: 'buy' },
  });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { error: String, needsKey: true });
  const withPlatform = await build(t, withPlatformKey);
  const relayed = await withPlatform.inject({
    method: 'POST',
    url: '/api/trader/prompt',
    headers: as(user),
    payload: { prompt: 'buy' },
  });
  t.match(relayed.json(), { success: true, jobId: /^job_/, threadId: /^thread_/, status: /^pending$/ });
  t.has(seen.at(-1), { method: 'POST', url: '/agent/prompt', key: 'platform-key-123', body: { prompt: 'buy' } });
});

t.test(
  "a thread of the platform account is continued only by the user who started it: anyone else's is 404 and never relayed",
  async (t) => {
    const app = await build(t, withPlatformKey);
    const owner = await subscriber('solo');
    const other = await subscriber('network');
    const started = await app.inject({
      method: 'POST',
      url: '/api/trader/prompt',
      headers: as(owner),
      payload: { prompt: 'buy' },
    });
    const { threadId } = started.json() as { threadId: string };
    t.match(
      await systemDb().selectFrom('trader_threads').selectAll().where('thread_id', '=', threadId).execute(),
      [{ user_id: owner.id, platform_key: true }],
      'bound to its user',
    );

    const continued = await app.inject({
      method: 'POST',
      url: '/api/trader/prompt',
      headers: as(owner),
      payload: { prompt: 'sell', threadId },
    });
    t.equal(continued.statusCode, 200, 'its owner continues it');
    t.has(seen.at(-1), { url: '/agent/prompt', key: 'platform-key-123', body: { prompt: 'sell', threadId } });

    const calls = seen.length;
    for (const [label, headers, thread] of [
      ["another entitled user, the owner's thread", as(other), threadId],
      ["an admin, the owner's thread", as(other, true), threadId],
      ['an unknown thread', as(owner), `thread_${randomUUID()}`],
    ] as const) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/trader/prompt',
        headers,
        payload: { prompt: 'sell everything', threadId: thread },
      });
      t.equal(res.statusCode, 404, label);
      t.same(res.json(), { error: 'Thread not found' }, label);
    }
    t.equal(seen.length, calls, 'the trading service never saw those prompts');
    t.equal(
      await systemDb()
        .selectFrom('trader_threads')
        .select('user_id')
        .where('thread_id', '=', threadId)
        .execute()
        .then((rows) => rows.length),
      1,
      'and nobody else holds the thread',
    );

    // A thread the trading service names only in a job's result is bound as well.
    await systemDb().deleteFrom('trader_threads').where('user_id', '=', owner.id).execute();
    t.equal(
      (
        await app.inject({
          method: 'GET',
          url: `/api/trader/prompt?jobId=${(started.json() as { jobId: string }).jobId}`,
          headers: as(owner),
        })
      ).statusCode,
      200,
    );
    t.match(
      await systemDb().selectFrom('trader_threads').selectAll().where('thread_id', '=', threadId).execute(),
      [{ user_id: owner.id, platform_key: true }],
      'bound from the job status',
    );

    await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('user_id', '=', owner.id).execute();
    const beforeLapsed = seen.length;
    const lapsed = await app.inject({
      method: 'POST',
      url: '/api/trader/prompt',
      headers: as(owner),
      payload: { prompt: 'buy', threadId },
    });
    t.equal(lapsed.statusCode, 503, 'its owner, entitled no more, cannot run it on the platform key');
    t.equal(seen.length, beforeLapsed, 'nor is it relayed');
  },
);

t.test('the platform key serves only entitled users: a paid plan (configurable) or an admin', async (t) => {
  const app = await build(t, withPlatformKey);
  const calls = seen.length;
  for (const [label, user] of [
    ['no subscription', await subscriber(null)],
    ['a canceled subscription', await subscriber('network', 'canceled')],
    ['a free plan', await subscriber('free')],
  ] as const) {
    for (const [method, url, payload] of [
      ['POST', '/api/trader/prompt', { prompt: 'buy' }],
      ['GET', '/api/trader/balances', undefined],
    ] as const) {
      const res = await app.inject({ method, url, headers: as(user), payload });
      t.equal(res.statusCode, 503, `${label}: ${method} ${url}`);
      t.match(res.json(), { error: String, needsKey: true });
    }
  }
  t.equal(seen.length, calls, 'the trading service never saw the platform key for them');

  const admin = await subscriber(null);
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/trader/balances?chains=base', headers: as(admin, true) })).statusCode,
    200,
    'an admin without a subscription',
  );
  t.equal(seen.at(-1)!.key, 'platform-key-123');
  const trialing = await subscriber('collective', 'trialing');
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/trader/balances?chains=base', headers: as(trialing) })).statusCode,
    200,
    'a trialing collective subscriber',
  );

  const labelOnly = await build(t, { ...withPlatformKey, TRADER_PLATFORM_KEY_PLANS: 'label,network' });
  t.equal(
    (await labelOnly.inject({ method: 'GET', url: '/api/trader/balances', headers: as(await subscriber('solo')) }))
      .statusCode,
    503,
    'solo is not among the configured plans',
  );
  t.equal(
    (await labelOnly.inject({ method: 'GET', url: '/api/trader/balances', headers: as(await subscriber('label')) }))
      .statusCode,
    200,
    'label is',
  );
});

t.test('a job made with the platform key is polled only by the user who started it', async (t) => {
  const app = await build(t, withPlatformKey);
  const owner = await subscriber('solo');
  const other = await subscriber('network');
  const started = await app.inject({
    method: 'POST',
    url: '/api/trader/prompt',
    headers: as(owner),
    payload: { prompt: 'buy' },
  });
  const { jobId } = started.json() as { jobId: string };
  t.match(
    await systemDb().selectFrom('trader_jobs').selectAll().where('job_id', '=', jobId).execute(),
    [{ user_id: owner.id, platform_key: true }],
    'bound to its user',
  );

  const polled = await app.inject({ method: 'GET', url: `/api/trader/prompt?jobId=${jobId}`, headers: as(owner) });
  t.equal(polled.statusCode, 200);
  t.has(polled.json(), { jobId, status: 'completed' });

  const calls = seen.length;
  const stranger = await app.inject({ method: 'GET', url: `/api/trader/prompt?jobId=${jobId}`, headers: as(other) });
  t.equal(stranger.statusCode, 404, 'another entitled user');
  t.same(stranger.json(), { error: 'Job not found' });
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/trader/prompt?jobId=${jobId}`, headers: as(other, true) }))
      .statusCode,
    404,
    'an admin',
  );
  t.equal(seen.length, calls, 'the platform key was not used for them');

  // With a key of their own the stranger's poll goes out under that key, which the trading service refuses.
  await app.inject({
    method: 'POST',
    url: '/api/user/trader-key',
    headers: as(other),
    payload: { apiKey: 'other-own-key' },
  });
  const ownKey = await app.inject({ method: 'GET', url: `/api/trader/prompt?jobId=${jobId}`, headers: as(other) });
  t.equal(ownKey.statusCode, 502);
  t.equal(seen.at(-1)!.key, 'other-own-key', 'never the platform key');

  // The owner, entitled no more, still reads the job they started.
  await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('user_id', '=', owner.id).execute();
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/trader/prompt?jobId=${jobId}`, headers: as(owner) })).statusCode,
    200,
  );
});

t.test("jobId is the trading service's id alphabet: nothing that reads as a path reaches it", async (t) => {
  const app = await build(t, withPlatformKey);
  const user = await subscriber('solo');
  const calls = seen.length;
  for (const jobId of ['..', '../balances', 'a/b', 'job.1', '%2e%2e', 'job_1%2F..', 'job 1', 'j'.repeat(129)]) {
    const res = await app.inject({
      method: 'GET',
      url: `/api/trader/prompt?jobId=${encodeURIComponent(jobId)}`,
      headers: as(user),
    });
    t.equal(res.statusCode, 400, jobId);
    t.match(res.json(), { error: /jobId/ });
  }
  t.equal(seen.length, calls, 'the trading service was not called');
});

t.test("the user's key: stored sealed, used before the platform key, replaced, deleted", async (t) => {
  const user = await subscriber(null);
  const app = await build(t, withPlatformKey);
  t.same((await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: as(user) })).json(), {
    configured: false,
  });
  t.same(
    (
      await app.inject({
        method: 'POST',
        url: '/api/user/trader-key',
        headers: as(user),
        payload: { apiKey: 'user-key-1' },
      })
    ).json(),
    { success: true },
  );
  t.same(
    (
      await app.inject({
        method: 'POST',
        url: '/api/user/trader-key',
        headers: as(user),
        payload: { apiKey: 'user-key-2' },
      })
    ).json(),
    { success: true },
  );
  t.same((await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: as(user) })).json(), {
    configured: true,
  });
  const row = await systemDb()
    .selectFrom('user_trader_keys')
    .selectAll()
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  t.notOk(row.api_key_sealed.includes('user-key'), 'sealed at rest');
  const { jobId } = (
    await app.inject({ method: 'POST', url: '/api/trader/prompt', headers: as(user), payload: { prompt: 'buy' } })
  ).json() as { jobId: string };
  t.equal(seen.at(-1)!.key, 'user-key-2', 'the replacing key is used');
  t.match(await systemDb().selectFrom('trader_jobs').selectAll().where('job_id', '=', jobId).execute(), [
    { user_id: user.id, platform_key: false },
  ]);
  const job = await app.inject({ method: 'GET', url: `/api/trader/prompt?jobId=${jobId}`, headers: as(user) });
  t.has(job.json(), { status: 'completed', response: 'done' });
  t.equal(seen.at(-1)!.key, 'user-key-2');
  const balances = await app.inject({ method: 'GET', url: '/api/trader/balances', headers: as(user) });
  t.same(balances.json(), { chains: ['base', 'polygon', 'mainnet', 'solana', 'unichain'] });
  t.same((await app.inject({ method: 'GET', url: '/api/trader/balances?chains=base', headers: as(user) })).json(), {
    chains: ['base'],
  });
  t.same((await app.inject({ method: 'DELETE', url: '/api/user/trader-key', headers: as(user) })).json(), {
    success: true,
  });
  t.same((await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: as(user) })).json(), {
    configured: false,
  });
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/trader/prompt?jobId=${jobId}`, headers: as(user) })).statusCode,
    503,
    'an own-key job without the key: needsKey',
  );
});

t.test(
  'bad input and failures: 400 without jobId, bad keys, 502 on upstream errors and timeouts, 401 signed out',
  async (t) => {
    const user = await subscriber('solo');
    const app = await build(t, withPlatformKey);
    t.match((await app.inject({ method: 'GET', url: '/api/trader/prompt', headers: as(user) })).json(), {
      error: /^jobId is required/,
    });
    for (const apiKey of ['', ' ', 'k'.repeat(513)])
      t.equal(
        (await app.inject({ method: 'POST', url: '/api/user/trader-key', headers: as(user), payload: { apiKey } }))
          .statusCode,
        400,
      );
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/user/trader-key', headers: identityHeaders() })).statusCode,
      401,
    );
    mode = 'fail';
    const failed = await app.inject({
      method: 'POST',
      url: '/api/trader/prompt',
      headers: as(user),
      payload: { prompt: 'x' },
    });
    t.equal(failed.statusCode, 502);
    t.notOk(failed.body.includes('platform-key-123'));
    mode = 'hang';
    const hung = await app.inject({ method: 'GET', url: '/api/trader/balances', headers: as(user) });
    t.equal(hung.statusCode, 502);
    t.match(hung.json(), { error: /timed out/ });
    mode = 'ok';
  },
);

t.test('keys sealed with an older key still work after rotation and are re-sealed with the current one', async (t) => {
  const user = await subscriber(null);
  const oldKeys = process.env.ENCRYPTION_KEYS!;
  const before = await build(t, { ...noPlatformKey });
  await before.inject({
    method: 'POST',
    url: '/api/user/trader-key',
    headers: as(user),
    payload: { apiKey: 'rotating-key' },
  });
  const rotated = await build(t, {
    ...noPlatformKey,
    ENCRYPTION_KEYS: `k2:${Buffer.alloc(32, 7).toString('base64')},${oldKeys}`,
  });
  const res = await rotated.inject({ method: 'GET', url: '/api/trader/balances?chains=base', headers: as(user) });
  t.equal(res.statusCode, 200);
  t.equal(seen.at(-1)!.key, 'rotating-key');
  const row = await systemDb()
    .selectFrom('user_trader_keys')
    .selectAll()
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  t.equal(row.api_key_sealed.split('.')[1], 'k2');
});
