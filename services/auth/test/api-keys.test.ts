import t from 'tap';
import { hashToken } from '@agentyard/crypto';
import {
  againstAnOpenTransaction,
  createUserRow,
  identityHeaders,
  malformedCursors,
  systemDb,
  walkPages,
  warmAppPool,
} from '@agentyard/testing';
import { createApiKey } from '../src/domain/api-keys.ts';
import { build } from './helper.ts';

t.test('a created key is shown once, stored hashed, listed without its secret, and deleted', async (t) => {
  const app = await build(t);
  const user = await createUserRow();
  const as = identityHeaders({ userId: user.id, email: user.email });
  const created = await app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: { name: 'ci' } });
  t.equal(created.statusCode, 201);
  const key = created.json();
  t.match(key, { id: String, name: /^ci$/, key: /^sk_[A-Za-z0-9_-]{43}$/, prefix: key.key.slice(0, 9) });
  const row = await systemDb().selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
  t.equal(row.key_hash, hashToken(key.key), 'only the hash is stored');
  t.notOk(JSON.stringify(row).includes(key.key), 'the secret is nowhere in the row');

  const list = await app.inject({ method: 'GET', url: '/api/keys', headers: as });
  t.equal(list.statusCode, 200);
  t.same(list.json(), {
    keys: [
      {
        id: key.id,
        name: 'ci',
        prefix: key.prefix,
        createdAt: key.createdAt,
        requestsPerMinute: null,
        tokensPerMinute: null,
      },
    ],
    nextCursor: null,
  });
  t.notOk(list.body.includes(key.key), 'the listing never shows the secret');
  // The key's own AI limits, set at PUT /api/keys/:id/limits (served by ai), are listed with it.
  await systemDb()
    .insertInto('api_key_minute_limits')
    .values({ key_id: key.id, user_id: user.id, requests_per_minute: 30, tokens_per_minute: null })
    .execute();
  t.match((await app.inject({ method: 'GET', url: '/api/keys', headers: as })).json().keys, [
    { id: key.id, requestsPerMinute: 30, tokensPerMinute: null },
  ]);

  const valid = await app.inject({
    method: 'POST',
    url: '/api/keys/validate',
    headers: identityHeaders(),
    payload: { key: key.key },
  });
  t.same(valid.json(), { valid: true });
  const alias = await app.inject({
    method: 'POST',
    url: '/api/validate-key',
    headers: identityHeaders(),
    payload: { key: key.key },
  });
  t.same(alias.json(), { valid: true });

  const deleted = await app.inject({ method: 'DELETE', url: `/api/keys/${key.id}`, headers: as });
  t.same(deleted.json(), { success: true });
  t.same((await app.inject({ method: 'GET', url: '/api/keys', headers: as })).json(), { keys: [], nextCursor: null });
  const after = await app.inject({
    method: 'POST',
    url: '/api/keys/validate',
    headers: identityHeaders(),
    payload: { key: key.key },
  });
  t.same(after.json(), { valid: false });
});

t.test('keys are private: another user neither lists nor deletes them', async (t) => {
  const app = await build(t);
  const [owner, other] = await Promise.all([createUserRow(), createUserRow()]);
  const key = (
    await app.inject({ method: 'POST', url: '/api/keys', headers: identityHeaders({ userId: owner.id }), payload: {} })
  ).json();
  t.equal(key.name, 'API key', 'a default name');
  const asOther = identityHeaders({ userId: other.id });
  t.same((await app.inject({ method: 'GET', url: '/api/keys', headers: asOther })).json(), {
    keys: [],
    nextCursor: null,
  });
  const res = await app.inject({ method: 'DELETE', url: `/api/keys/${key.id}`, headers: asOther });
  t.equal(res.statusCode, 404);
  t.same(res.json(), { error: 'API key not found' });
  t.ok(await systemDb().selectFrom('api_keys').select('id').where('id', '=', key.id).executeTakeFirst(), 'still there');
});

t.test('key routes need a signed-in user; validation rejects unknown and malformed keys', async (t) => {
  const app = await build(t);
  for (const [method, url] of [
    ['GET', '/api/keys'],
    ['POST', '/api/keys'],
    ['DELETE', '/api/keys/00000000-0000-4000-8000-000000000000'],
  ] as const) {
    const res = await app.inject({
      method,
      url,
      headers: identityHeaders(),
      payload: method === 'POST' ? {} : undefined,
    });
    t.equal(res.statusCode, 401, `${method} ${url}`);
  }
  for (const key of ['sk_unknown', 'not-a-key']) {
    t.same(
      (
        await app.inject({ method: 'POST', url: '/api/keys/validate', headers: identityHeaders(), payload: { key } })
      ).json(),
      { valid: false },
    );
  }
  const bad = await app.inject({
    method: 'DELETE',
    url: '/api/keys/not-a-uuid',
    headers: identityHeaders({ userId: (await createUserRow()).id }),
  });
  t.equal(bad.statusCode, 400);
});

const keysOf = async (userId: string) =>
  (await systemDb().selectFrom('api_keys').select('id').where('user_id', '=', userId).execute()).length;

t.test('at the cap a new key is 429 and nothing is created', async (t) => {
  const app = await build(t, { API_KEYS_PER_USER_MAX: '3' });
  const user = await createUserRow();
  const as = identityHeaders({ userId: user.id, email: user.email });
  for (let i = 0; i < 3; i++)
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: { name: `k${i}` } })).statusCode,
      201,
    );
  const res = await app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: { name: 'one too many' } });
  t.equal(res.statusCode, 429);
  t.same(res.json(), {
    error: 'API key limit reached: at most 3 per user; delete one first',
    code: 'API_KEY_LIMIT',
    limit: 3,
  });
  t.notOk(res.body.includes('sk_'), 'no key handed out');
  t.equal(await keysOf(user.id), 3);
  const first = (await app.inject({ method: 'GET', url: '/api/keys', headers: as })).json().keys[0];
  await app.inject({ method: 'DELETE', url: `/api/keys/${first.id}`, headers: as });
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: {} })).statusCode,
    201,
    'a delete makes room',
  );
});

t.test('concurrent creations at cap - 1: exactly one is created', async (t) => {
  const app = await build(t, { API_KEYS_PER_USER_MAX: '3' });
  const user = await createUserRow();
  const as = identityHeaders({ userId: user.id, email: user.email });
  for (let i = 0; i < 2; i++) await app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: {} });
  await warmAppPool();
  const results = await Promise.all(
    Array.from({ length: 6 }, () => app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: {} })),
  );
  t.same(results.map((r) => r.statusCode).sort(), [201, 429, 429, 429, 429, 429]);
  t.equal(await keysOf(user.id), 3);

  const other = await createUserRow();
  const asOther = identityHeaders({ userId: other.id, email: other.email });
  for (let i = 0; i < 2; i++) await app.inject({ method: 'POST', url: '/api/keys', headers: asOther, payload: {} });
  const [first, second] = await againstAnOpenTransaction(
    other.id,
    (trx) => createApiKey(trx, other.id, 3, 'first'),
    () => app.inject({ method: 'POST', url: '/api/keys', headers: asOther, payload: {} }),
  );
  t.equal(first.status, 'fulfilled');
  t.equal(
    second.status === 'fulfilled' && second.value.statusCode,
    429,
    'a creation waits for one still uncommitted, then is refused',
  );
  t.equal(await keysOf(other.id), 3);
});

t.test(
  'pages walk every key newest first, none twice, none skipped, while keys are added between pages; a malformed cursor is 400',
  async (t) => {
    const app = await build(t);
    const user = await createUserRow();
    const as = identityHeaders({ userId: user.id, email: user.email });
    const add = async () =>
      (await app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: {} })).json().id as string;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await add());
    const added: string[] = [];
    const pages = await walkPages(
      async (cursor) => {
        const body = (
          await app.inject({ method: 'GET', url: `/api/keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers: as })
        ).json();
        return { items: body.keys.map((k: { id: string }) => k.id), nextCursor: body.nextCursor };
      },
      async () => {
        added.push(await add());
      },
    );
    t.same(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    t.same(pages.flat(), [...made].reverse());
    for (const cursor of malformedCursors()) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/keys?cursor=${encodeURIComponent(cursor)}`,
        headers: as,
      });
      t.equal(res.statusCode, 400, cursor);
    }
    t.equal((await app.inject({ method: 'GET', url: '/api/keys?limit=101', headers: as })).statusCode, 400);
  },
);
