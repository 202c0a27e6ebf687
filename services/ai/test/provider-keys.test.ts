import t from 'tap';
import { once } from 'node:events';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { agentHeaders, build, hostedAgentOf, noticeApplied } from './helper.ts';
import { randomToken } from '@agentyard/crypto';
import { startLocalProviders } from './providers.ts';

// Solo includes no allowance here: a call on the platform's key is refused 402 without credits,
// so a call served for a solo user proves it drew nothing from allowance or credits.
const providers = await startLocalProviders(t);
const app = await build(t, {
  ...providers.env,
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:15,label:40,network:150',
});
if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

async function soloUserWithAgent() {
  const user = await createUserRow({ plan: 'solo' });
  const agent = await hostedAgentOf(user.id);
  return { ...user, web: identityHeaders({ userId: user.id, email: user.email }), ...agent };
}
async function storeKey(user: { id: string; web: Record<string, string> }, provider: string, apiKey: string) {
  const heard = noticeApplied(app, `provider_keys:${user.id}`);
  const res = await app.inject({
    method: 'PUT',
    url: `/api/billing/provider-keys/${provider}`,
    headers: user.web,
    payload: { apiKey },
  });
  await heard;
  return res;
}
const ask = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const chat = (key: string, body: object = ask) =>
  app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(key), payload: body });

t.test(
  "a call for a provider the user brought a key for reaches it with the user's key and charges nothing",
  async (t) => {
    const user = await soloUserWithAgent();
    t.equal((await chat(user.key)).json().code, 'CREDITS_EXHAUSTED', "on the platform's key: no allowance, no credits");

    const ownKey = `sk-own-${randomToken(12)}`;
    const stored = await storeKey(user, 'openai', ownKey);
    t.equal(stored.statusCode, 200, stored.body);
    t.match(stored.json(), { provider: /^openai$/, hint: ownKey.slice(-4), updatedAt: String });
    t.notOk(stored.body.includes(ownKey), 'the key is never answered');
    const listed = await app.inject({ method: 'GET', url: '/api/billing/provider-keys', headers: user.web });
    t.same(
      listed.json().keys.map((k: { provider: string; hint: string }) => [k.provider, k.hint]),
      [['openai', ownKey.slice(-4)]],
    );
    const row = await systemDb()
      .selectFrom('provider_keys')
      .select(['key_sealed', 'key_hint'])
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    t.notOk(row.key_sealed.includes(ownKey), 'stored sealed');

    for (const body of [ask, { ...ask, stream: true }]) {
      const res = await chat(user.key, body);
      t.equal(res.statusCode, 200, res.body);
      t.equal(providers.delivered.at(-1)!.headers.authorization, `Bearer ${ownKey}`, "the provider saw the user's key");
    }
    const embedded = await app.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: agentHeaders(user.key),
      payload: { model: 'openai/text-embedding-3-small', input: 'hello' },
    });
    t.equal(embedded.statusCode, 200, embedded.body);
    t.equal(providers.delivered.at(-1)!.headers.authorization, `Bearer ${ownKey}`, 'passed-through wires too');

    await app.usageWriter.flush();
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['cost_usd', 'detail', 'input_tokens'])
      .where('agent_id', '=', user.agentId)
      .execute();
    t.equal(rows.length, 3);
    t.ok(
      rows.every((r) => Number(r.cost_usd) === 0 && r.detail?.ownKey === true && r.input_tokens > 0),
      'recorded with their tokens, at no cost, marked as on their own key',
    );
    const credits = await systemDb().selectFrom('credit_entries').select('id').where('user_id', '=', user.id).execute();
    t.same(credits, [], 'no credits were taken');

    const forgotten = noticeApplied(app, `provider_keys:${user.id}`);
    const removed = await app.inject({ method: 'DELETE', url: '/api/billing/provider-keys/openai', headers: user.web });
    t.same(removed.json(), { keys: [] });
    await forgotten;
    t.equal(
      (await chat(user.key)).json().code,
      'CREDITS_EXHAUSTED',
      "removed: back on the platform's key and the allowance",
    );
  },
);

t.test(
  "a revoked key answers the provider's refusal in words, and no fallback spends the platform's account",
  async (t) => {
    const user = await soloUserWithAgent();
    const ownKey = `sk-revoked-${randomToken(12)}`;
    providers.revokedKeys.add(ownKey);
    t.equal((await storeKey(user, 'openai', ownKey)).statusCode, 200);
    const before = providers.delivered.length;
    const res = await chat(user.key);
    t.equal(res.statusCode, 400, res.body);
    t.match(res.json(), {
      error: /^openai refused your own openai key \(401\): Incorrect API key provided: .*The key was revoked\./,
      code: /^PROVIDER_KEY_REFUSED$/,
      providerStatus: 401,
    });
    t.notOk(res.body.includes(ownKey), 'the key itself is not echoed beyond what the provider masked');
    t.equal(providers.delivered.length - before, 1, 'tried once: a 401 is not retried, and not sent to the fallback');
    const embedded = await app.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: agentHeaders(user.key),
      payload: { model: 'openai/text-embedding-3-small', input: 'hello' },
    });
    t.equal(embedded.json().code, 'PROVIDER_KEY_REFUSED');
    await app.usageWriter.flush();
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['model', 'outcome', 'cost_usd', 'detail'])
      .where('agent_id', '=', user.agentId)
      .orderBy('occurred_at')
      .execute();
    t.match(
      rows,
      ['openai/gpt-4o-mini', 'openai/text-embedding-3-small'].map((model) => ({
        model,
        outcome: 'failed',
        cost_usd: /^0(\.0+)?$/,
        detail: { ownKey: true, attempts: [{ model, status: 401, outcome: 'failed' }] },
      })),
      "both are failed calls in the owner's usage, the provider's refusal in their attempts",
    );
  },
);

t.test("keys are their owner's: write-only, listed to nobody else, bad input refused", async (t) => {
  const user = await soloUserWithAgent();
  const other = await soloUserWithAgent();
  t.equal((await storeKey(user, 'anthropic', `sk-ant-${randomToken(12)}`)).statusCode, 200);
  t.same((await app.inject({ method: 'GET', url: '/api/billing/provider-keys', headers: other.web })).json(), {
    keys: [],
  });
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/billing/provider-keys/anthropic', headers: other.web }))
      .statusCode,
    404,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/billing/provider-keys', headers: user.web })).json().keys.length,
    1,
    'still there',
  );
  for (const [provider, payload] of [
    ['minimax', { apiKey: 'sk-long-enough-key' }],
    ['openai', { apiKey: 'short' }],
    ['openai', { apiKey: 'has a space in it' }],
    ['openai', { apiKey: 'sk-long-enough-key', extra: true }],
    ['openai', {}],
  ] as const) {
    const res = await app.inject({
      method: 'PUT',
      url: `/api/billing/provider-keys/${provider}`,
      headers: other.web,
      payload,
    });
    t.equal(res.statusCode, 400, `${provider} ${JSON.stringify(payload)}`);
  }
  t.same(
    await systemDb().selectFrom('provider_keys').select('provider').where('user_id', '=', other.id).execute(),
    [],
    'nothing stored',
  );
});
