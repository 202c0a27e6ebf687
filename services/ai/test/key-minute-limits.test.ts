import t from 'tap';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { PLAN_MINUTE_CAPS } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// Two gateway processes on one database and one Redis: a key's limits set through one hold in both.
const providers = await startLocalProviders(t);
const first = await build(t, providers.env);
const second = await build(t, providers.env);
for (const app of [first, second]) if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

/** One of the user's `sk_` keys, and what the edge signs for a call made with it. */
async function keyOf(userId: string) {
  const key = await systemDb()
    .insertInto('api_keys')
    .values({ user_id: userId, name: 'paced', key_hash: randomBytes(32).toString('hex'), prefix: 'sk_test' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { keyId: key.id, headers: identityHeaders({ surface: 'web', auth: 'user-key', userId, keyId: key.id }) };
}
async function owner(plan = 'collective') {
  const user = await createUserRow({ plan });
  return { ...user, web: identityHeaders({ userId: user.id, email: user.email }) };
}
/** Resolves once `app` has applied the database's notice `payload`. */
const noticed = (app: ServiceApp, payload: string) =>
  new Promise<void>((resolve) => {
    const on = (p: string) => {
      if (p !== payload) return;
      app.callerLookups.events.off('notice', on);
      resolve();
    };
    app.callerLookups.events.on('notice', on);
  });
const ask = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const call = (app: ServiceApp, headers: Record<string, string>, body: object = ask) => app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: body });
const putLimits = (headers: Record<string, string>, keyId: string, payload: object) => first.inject({ method: 'PUT', url: `/api/keys/${keyId}/limits`, headers, payload });
/** Sets limits through the first process and waits until both have heard of them. */
async function limit(headers: Record<string, string>, keyId: string, payload: object) {
  const heard = Promise.all([noticed(first, `api_keys:${keyId}`), noticed(second, `api_keys:${keyId}`)]);
  const res = await putLimits(headers, keyId, payload);
  await heard;
  return res;
}

t.test("a key limited to 2 requests a minute is refused its third with 429 and Retry-After, in every process, while the owner's other key is served", async (t) => {
  const user = await owner();
  const paced = await keyOf(user.id);
  const other = await keyOf(user.id);
  t.equal((await call(first, paced.headers)).statusCode, 200, 'served before any limit');

  const set = await limit(user.web, paced.keyId, { requestsPerMinute: 2, tokensPerMinute: null });
  t.equal(set.statusCode, 200, set.body);
  t.same(set.json(), { keyId: paced.keyId, requestsPerMinute: 2, tokensPerMinute: null, caps: PLAN_MINUTE_CAPS.collective });

  t.equal((await call(first, paced.headers)).statusCode, 200);
  t.equal((await call(second, paced.headers)).statusCode, 200);
  const before = providers.delivered.length;
  for (const app of [first, second]) {
    for (const body of [ask, { ...ask, stream: true }]) {
      const refused = await call(app, paced.headers, body);
      t.equal(refused.statusCode, 429, refused.body);
      t.match(refused.json(), { error: /This API key's limit of 2 requests per minute/, code: 'KEY_RATE_LIMITED' });
      const retryAfter = Number(refused.headers['retry-after']);
      t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers['retry-after']}`);
    }
  }
  t.equal(providers.delivered.length, before, 'no refused call reached the provider');

  for (const app of [first, second]) t.equal((await call(app, other.headers)).statusCode, 200, 'the same owner’s other key is served');
  const keyless = identityHeaders({ surface: 'web', auth: 'user-key', userId: user.id });
  t.equal((await call(first, keyless)).statusCode, 200, 'a caller the edge named no key for is not counted against one');
  const session = await first.inject({ method: 'GET', url: `/api/keys/${paced.keyId}/limits`, headers: user.web });
  t.equal(session.statusCode, 200, "the owner's session is not limited by its key");

  const lifted = await limit(user.web, paced.keyId, { requestsPerMinute: null, tokensPerMinute: null });
  t.equal(lifted.statusCode, 200);
  t.equal((await call(second, paced.headers)).statusCode, 200, 'no limit: served again');
});

t.test("a key's tokens count on the answer's real usage, on the passed-through wires too", async (t) => {
  const user = await owner();
  const paced = await keyOf(user.id);
  t.equal((await limit(user.web, paced.keyId, { requestsPerMinute: null, tokensPerMinute: 10 })).statusCode, 200);
  // The local provider's answer counts 18 tokens: the call under the limit is served, and spends it.
  t.equal((await call(first, paced.headers)).statusCode, 200);
  const refused = await call(second, paced.headers);
  t.equal(refused.statusCode, 429);
  t.match(refused.json(), { error: /limit of 10 tokens per minute/, code: 'KEY_RATE_LIMITED' });

  const embedder = await keyOf(user.id);
  t.equal((await limit(user.web, embedder.keyId, { requestsPerMinute: null, tokensPerMinute: 5 })).statusCode, 200);
  const embed = () => first.inject({ method: 'POST', url: '/v1/embeddings', headers: embedder.headers, payload: { model: 'openai/text-embedding-3-small', input: 'x'.repeat(40) } });
  t.equal((await embed()).statusCode, 200);
  t.equal((await embed()).statusCode, 429, 'its 10 input tokens spent the 5 allowed');
});

t.test("a key's limits are its owner's to read and set, within the plan's caps, and go with the key", async (t) => {
  const user = await owner('solo');
  const key = await keyOf(user.id);
  const read = await first.inject({ method: 'GET', url: `/api/keys/${key.keyId}/limits`, headers: user.web });
  t.equal(read.statusCode, 200);
  t.same(read.json(), { keyId: key.keyId, requestsPerMinute: null, tokensPerMinute: null, caps: PLAN_MINUTE_CAPS.solo });

  const beyond = await putLimits(user.web, key.keyId, { requestsPerMinute: null, tokensPerMinute: PLAN_MINUTE_CAPS.solo.tokensPerMinute + 1 });
  t.equal(beyond.statusCode, 400);
  t.match(beyond.json(), { error: `tokensPerMinute can be at most ${PLAN_MINUTE_CAPS.solo.tokensPerMinute} on the solo plan`, code: 'BEYOND_PLAN_CAP' });
  for (const payload of [
    { requestsPerMinute: 0, tokensPerMinute: null },
    { requestsPerMinute: 5 },
    { requestsPerMinute: 5, tokensPerMinute: null, extra: 1 },
    { requestsPerMinute: '5', tokensPerMinute: null },
    { requestsPerMinute: 1.5, tokensPerMinute: null },
  ]) {
    const bad = await putLimits(user.web, key.keyId, payload);
    t.equal(bad.statusCode, 400, JSON.stringify(payload));
    t.type(bad.json().error, 'string');
  }
  const notAnId = await first.inject({ method: 'PUT', url: '/api/keys/not-a-uuid/limits', headers: user.web, payload: { requestsPerMinute: 1, tokensPerMinute: null } });
  t.equal(notAnId.statusCode, 400);
  t.type(notAnId.json().error, 'string');
  const none = async () => systemDb().selectFrom('api_key_minute_limits').selectAll().where('key_id', '=', key.keyId).execute();
  t.same(await none(), [], 'refused input changed nothing');

  const stranger = await owner('network');
  for (const method of ['GET', 'PUT'] as const) {
    const res = await first.inject({
      method,
      url: `/api/keys/${key.keyId}/limits`,
      headers: stranger.web,
      ...(method === 'PUT' ? { payload: { requestsPerMinute: 1, tokensPerMinute: 1 } } : {}),
    });
    t.equal(res.statusCode, 404, `another user's key: ${method} 404`);
    t.match(res.json(), { error: `API key ${key.keyId} not found` });
  }
  t.same(await none(), [], "a stranger's attempt changed nothing");
  const unpaid = await owner('free');
  t.equal((await first.inject({ method: 'GET', url: `/api/keys/${key.keyId}/limits`, headers: unpaid.web })).statusCode, 402, 'no plan, no caps');

  t.equal((await putLimits(user.web, key.keyId, { requestsPerMinute: 60, tokensPerMinute: 1000 })).statusCode, 200);
  const stored = await systemDb().selectFrom('api_key_minute_limits').select(['user_id', 'requests_per_minute', 'tokens_per_minute']).where('key_id', '=', key.keyId).executeTakeFirstOrThrow();
  t.same(stored, { user_id: user.id, requests_per_minute: 60, tokens_per_minute: 1000 });

  await systemDb().deleteFrom('api_keys').where('id', '=', key.keyId).execute();
  t.same(await none(), [], 'deleting the key deletes its limits');
});
