import t from 'tap';
import { hashToken } from '@agentyard/crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

t.test('a created key is shown once, stored hashed, listed without its secret, and deleted', async (t) => {
  const app = await build(t);
  const user = await createUserRow();
  const as = identityHeaders({ userId: user.id, email: user.email });
  const created = await app.inject({ method: 'POST', url: '/api/keys', headers: as, payload: { name: 'ci' } });
  t.equal(created.statusCode, 201);
  const key = created.json();
  t.match(key, { id: String, name: 'ci', key: /^sk_[A-Za-z0-9_-]{43}$/, prefix: key.key.slice(0, 9) });
  const row = await systemDb().selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
  t.equal(row.key_hash, hashToken(key.key), 'only the hash is stored');
  t.notOk(JSON.stringify(row).includes(key.key), 'the secret is nowhere in the row');

  const list = await app.inject({ method: 'GET', url: '/api/keys', headers: as });
  t.equal(list.statusCode, 200);
  t.same(list.json(), { keys: [{ id: key.id, name: 'ci', prefix: key.prefix, createdAt: key.createdAt }] });
  t.notOk(list.body.includes(key.key), 'the listing never shows the secret');

  const valid = await app.inject({ method: 'POST', url: '/api/keys/validate', headers: identityHeaders(), payload: { key: key.key } });
  t.same(valid.json(), { valid: true });
  const alias = await app.inject({ method: 'POST', url: '/api/validate-key', headers: identityHeaders(), payload: { key: key.key } });
  t.same(alias.json(), { valid: true });

  const deleted = await app.inject({ method: 'DELETE', url: `/api/keys/${key.id}`, headers: as });
  t.same(deleted.json(), { success: true });
  t.same((await app.inject({ method: 'GET', url: '/api/keys', headers: as })).json(), { keys: [] });
  const after = await app.inject({ method: 'POST', url: '/api/keys/validate', headers: identityHeaders(), payload: { key: key.key } });
  t.same(after.json(), { valid: false });
});

t.test('keys are private: another user neither lists nor deletes them', async (t) => {
  const app = await build(t);
  const [owner, other] = await Promise.all([createUserRow(), createUserRow()]);
  const key = (await app.inject({ method: 'POST', url: '/api/keys', headers: identityHeaders({ userId: owner.id }), payload: {} })).json();
  t.equal(key.name, 'API key', 'a default name');
  const asOther = identityHeaders({ userId: other.id });
  t.same((await app.inject({ method: 'GET', url: '/api/keys', headers: asOther })).json(), { keys: [] });
  const res = await app.inject({ method: 'DELETE', url: `/api/keys/${key.id}`, headers: asOther });
  t.equal(res.statusCode, 404);
  t.same(res.json(), { error: 'API key not found' });
  t.ok(await systemDb().selectFrom('api_keys').select('id').where('id', '=', key.id).executeTakeFirst(), 'still there');
});

t.test('key routes need a signed-in user; validation rejects unknown and malformed keys', async (t) => {
  const app = await build(t);
  for (const [method, url] of [['GET', '/api/keys'], ['POST', '/api/keys'], ['DELETE', '/api/keys/00000000-0000-4000-8000-000000000000']] as const) {
    const res = await app.inject({ method, url, headers: identityHeaders(), payload: method === 'POST' ? {} : undefined });
    t.equal(res.statusCode, 401, `${method} ${url}`);
  }
  for (const key of ['sk_unknown', 'not-a-key']) {
    t.same((await app.inject({ method: 'POST', url: '/api/keys/validate', headers: identityHeaders(), payload: { key } })).json(), { valid: false });
  }
  const bad = await app.inject({ method: 'DELETE', url: '/api/keys/not-a-uuid', headers: identityHeaders({ userId: (await createUserRow()).id }) });
  t.equal(bad.statusCode, 400);
});
