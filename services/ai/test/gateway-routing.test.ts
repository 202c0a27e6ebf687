import t from 'tap';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { createUserRow, identityHeaders, startPageServer, systemDb } from '@agentyard/testing';
import { addCreditEntry } from '../src/domain/spending/index.ts';
import { activeSubscriptionRow, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// POST /api/v1/gateway through the AI service: each plugin's answer, its fee reserved before and
// charged after (allowance first, then credits, in the ledger), 402 when neither covers it, and
// CORS for the configured origins only. Solo includes no allowance here; collective includes $15.
const FEES = { 'generate-text': 0.002, summarize: 0.003, agent: 0.01 };
const ORIGIN = 'https://scripts.example.test';
const providers = await startLocalProviders(t);
const pages = await startPageServer(t);
const app = await build(t, {
  ...providers.env,
  PAGE_FETCH_TEST_HOSTS: pages.host,
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:15,label:40,network:150',
  GATEWAY_PLUGIN_PRICES_USD: Object.entries(FEES)
    .map(([plugin, usd]) => `${plugin}:${usd}`)
    .join(','),
  GATEWAY_CORS_ORIGINS: ORIGIN,
});
if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

async function subscriber(plan: string, creditsUsd = 0) {
  const user = await createUserRow();
  await activeSubscriptionRow(user.id, plan);
  if (creditsUsd > 0)
    await addCreditEntry(systemDb(), {
      userId: user.id,
      kind: 'purchase',
      amountUsd: creditsUsd,
      note: 'Credits',
      source: `test:${randomUUID()}`,
    });
  return { ...user, headers: identityHeaders({ userId: user.id, email: user.email }) };
}
const call = (headers: Record<string, string>, payload: object) =>
  app.inject({ method: 'POST', url: '/api/v1/gateway', headers, payload });
const ledger = (userId: string) =>
  systemDb()
    .selectFrom('credit_entries')
    .select(['kind', 'amount_usd'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
const usage = (userId: string) =>
  systemDb()
    .selectFrom('usage_events')
    .select(['model', 'provider', 'cost_usd'])
    .where('user_id', '=', userId)
    .orderBy('occurred_at')
    .execute();
const close = (actual: number, expected: number) => Math.abs(actual - expected) < 1e-8;

t.test('generate-text beyond the allowance: the answer, the fee from credits, and both in the ledger', async (t) => {
  const user = await subscriber('solo', 1);
  const res = await call(user.headers, { plugin: 'generate-text', input: 'Write a line about quinces' });
  t.equal(res.statusCode, 200, res.body);
  const answer = res.json();
  t.match(answer, {
    id: String,
    plugin: /^generate-text$/,
    output: 'Hello from the local provider',
    model: String,
    usage: { totalTokens: Number },
    payment: { method: /^credits$/, chargedUsd: FEES['generate-text'] },
  });
  t.match(
    JSON.stringify(providers.delivered.at(-1)!.body),
    /Write a line about quinces/,
    'the prompt reached the model',
  );
  const rows = await usage(user.id);
  t.same(
    rows.map((r) => [r.model, r.provider]),
    [
      [answer.model, 'gemini'],
      ['gateway/generate-text', 'agentyard'],
    ],
    "the model's usage, then the fee",
  );
  const spent = rows.reduce((sum, r) => sum + Number(r.cost_usd), 0);
  t.ok(close(Number(rows[1]!.cost_usd), FEES['generate-text']), 'the fee is the configured price');
  const entries = await ledger(user.id);
  const taken = -entries.filter((e) => e.kind === 'usage').reduce((sum, e) => sum + Number(e.amount_usd), 0);
  t.ok(close(taken, spent), `the ledger took the model's cost and the fee (${taken} of ${spent})`);
  t.ok(close(answer.payment.balanceUsd, 1 - spent), `the balance after the call (${answer.payment.balanceUsd})`);
});

t.test("within the allowance the fee is the allowance's; the ledger is untouched", async (t) => {
  const user = await subscriber('collective');
  const res = await call({ ...user.headers, 'x-plugin-id': 'generate-text' }, { input: 'Another line' });
  t.equal(res.statusCode, 200, res.body);
  t.has(res.json(), {
    plugin: 'generate-text',
    payment: { method: 'allowance', chargedUsd: FEES['generate-text'], balanceUsd: 0 },
  });
  t.same(await ledger(user.id), []);
  t.ok(
    (await usage(user.id)).some((r) => r.model === 'gateway/generate-text'),
    'the fee counts against the month',
  );
});

t.test('neither allowance nor credits: 402 with a code, no model call, no charge', async (t) => {
  const user = await subscriber('solo');
  const before = providers.delivered.length;
  const res = await call(user.headers, { plugin: 'generate-text', input: 'Anything' });
  t.equal(res.statusCode, 402);
  t.match(res.json(), { error: String, code: /^CREDITS_EXHAUSTED$/ });
  t.equal(providers.delivered.length, before);
  await app.usageWriter.flush();
  t.same(await usage(user.id), []);
  const planless = await createUserRow();
  const noPlan = await call(identityHeaders({ userId: planless.id, email: planless.email }), {
    plugin: 'generate-text',
    input: 'Anything',
  });
  t.equal(noPlan.statusCode, 402);
  t.has(noPlan.json(), { code: 'SUBSCRIPTION_REQUIRED' });
});

t.test(
  'summarize: a page read and summarized for its fee; a page that redirects to a private address is refused and not charged',
  async (t) => {
    const user = await subscriber('solo', 1);
    const res = await call(user.headers, { plugin: 'summarize', input: `${pages.origin}/moved` });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), {
      plugin: /^summarize$/,
      url: `${pages.origin}/article`,
      output: 'Hello from the local provider',
      payment: { method: /^credits$/, chargedUsd: FEES.summarize },
    });
    t.match(JSON.stringify(providers.delivered.at(-1)!.body), /Simmer chopped quinces/);
    const feesBefore = (await usage(user.id)).filter((r) => r.model === 'gateway/summarize').length;
    const refused = await call(user.headers, { plugin: 'summarize', input: `${pages.origin}/to-private` });
    t.equal(refused.statusCode, 400);
    t.has(refused.json(), { code: 'URL_REFUSED' });
    await app.usageWriter.flush();
    t.equal(
      (await usage(user.id)).filter((r) => r.model === 'gateway/summarize').length,
      feesBefore,
      'the refused call was not charged',
    );
    const notUrl = await call(user.headers, { plugin: 'summarize', input: 'quinces' });
    t.equal(notUrl.statusCode, 400);
  },
);

t.test('the plugin is named and known; agent needs agentId', async (t) => {
  const user = await subscriber('collective');
  const unknown = await call(user.headers, { plugin: 'image-generation', input: 'x' });
  t.equal(unknown.statusCode, 400);
  t.match(unknown.json(), { error: /Unknown plugin image-generation/, code: /^UNKNOWN_PLUGIN$/ });
  t.has((await call({ ...user.headers, 'x-plugin-id': 'nope' }, { input: 'x' })).json(), { code: 'UNKNOWN_PLUGIN' });
  t.has((await call(user.headers, { input: 'x' })).json(), { code: 'PLUGIN_REQUIRED' });
  const agentless = await call(user.headers, { plugin: 'agent', input: 'hello' });
  t.equal(agentless.statusCode, 400);
  t.match(agentless.json(), { error: /agentId/ });
  t.equal(
    (await call(user.headers, { plugin: 'generate-text', input: 'x', extra: 1 })).statusCode,
    400,
    'unknown fields are refused',
  );
});

t.test('CORS: the preflight and the answer for configured origins only', async (t) => {
  const preflight = (origin: string) =>
    app.inject({
      method: 'OPTIONS',
      url: '/api/v1/gateway',
      headers: {
        ...identityHeaders(),
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
  const allowed = await preflight(ORIGIN);
  t.equal(allowed.statusCode, 204);
  t.equal(allowed.headers['access-control-allow-origin'], ORIGIN);
  t.match(allowed.headers['access-control-allow-headers'], /authorization/);
  t.equal(allowed.headers['access-control-allow-methods'], 'POST');
  const other = await preflight('https://evil.example.test');
  t.equal(other.statusCode, 403);
  t.notOk(other.headers['access-control-allow-origin']);
  t.has(other.json(), { code: 'ORIGIN_NOT_ALLOWED' });

  const user = await subscriber('collective');
  const answered = await call({ ...user.headers, origin: ORIGIN }, { plugin: 'generate-text', input: 'x' });
  t.equal(answered.headers['access-control-allow-origin'], ORIGIN);
  const elsewhere = await call(
    { ...user.headers, origin: 'https://evil.example.test' },
    { plugin: 'generate-text', input: 'x' },
  );
  t.notOk(elsewhere.headers['access-control-allow-origin']);
});

t.test('signed out: 401, and nothing is dispatched', async (t) => {
  const before = providers.delivered.length;
  t.equal((await call(identityHeaders(), { plugin: 'generate-text', input: 'x' })).statusCode, 401);
  t.equal(providers.delivered.length, before);
});
