import t from 'tap';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { withUser } from '@agentyard/db';
import { appDb, createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { addCreditEntry, creditBalanceUsd, monthUsage, spendingLimits } from '../src/domain/spending/index.ts';
import { activeSubscriptionRow, agentHeaders, backendHeaders, build, hostedAgentOf, noticeApplied } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// Solo includes no allowance here, so every solo call draws on credits; collective includes $15.
const providers = await startLocalProviders(t);
const app = await build(t, {
  ...providers.env,
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:15,label:40,network:150',
});
if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

async function subscribedUser(plan: string) {
  const user = await createUserRow();
  const subscription = await activeSubscriptionRow(user.id, plan);
  return { ...user, subscription, web: identityHeaders({ userId: user.id, email: user.email }) };
}
const ask = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const agentCall = (key: string, body: object = ask) =>
  app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(key), payload: body });
const backendCall = (user: { id: string; subscription: string }, plan: string) =>
  app.inject({
    method: 'POST',
    url: '/api/ai/chat',
    headers: backendHeaders({ userId: user.id, plan, subscription: user.subscription }),
    payload: ask,
  });
const credits = (headers: Record<string, string>, query = '') =>
  app.inject({ method: 'GET', url: `/api/credits${query}`, headers });

t.test(
  'allowance and credits spent: 402 CREDITS_EXHAUSTED on every surface, and the provider sees nothing',
  async (t) => {
    const user = await subscribedUser('solo');
    const agent = await hostedAgentOf(user.id);
    const before = providers.delivered.length;
    for (const res of [
      await agentCall(agent.key),
      await agentCall(agent.key, { ...ask, stream: true }),
      await backendCall(user, 'solo'),
    ]) {
      t.equal(res.statusCode, 402, res.body);
      t.match(res.json(), { error: String, code: /^CREDITS_EXHAUSTED$/ });
    }
    t.equal(providers.delivered.length, before, 'no call reached the provider');
  },
);

t.test('credits arriving lift the refusal; spend beyond the allowance is taken from them in the ledger', async (t) => {
  const user = await subscribedUser('solo');
  const agent = await hostedAgentOf(user.id);
  t.equal((await agentCall(agent.key)).json().code, 'CREDITS_EXHAUSTED');

  const arrived = noticeApplied(app, `credit_entries:${user.id}`);
  const source = `test-payment:${randomUUID()}`;
  t.match(
    await addCreditEntry(systemDb(), { userId: user.id, kind: 'purchase', amountUsd: 2, note: 'Credits', source }),
    { added: true },
  );
  await arrived;
  t.match(
    await addCreditEntry(systemDb(), { userId: user.id, kind: 'purchase', amountUsd: 2, note: 'Credits', source }),
    { added: false },
    'a payment applies once',
  );
  t.equal(await creditBalanceUsd(systemDb(), user.id), 2);

  const res = await agentCall(agent.key);
  t.equal(res.statusCode, 200, res.body);
  t.equal((await backendCall(user, 'solo')).statusCode, 200);
  await app.usageWriter.flush();
  const cost = Number(
    (
      await systemDb()
        .selectFrom('usage_events')
        .select((eb) => eb.fn.sum<string>('cost_usd').as('cost'))
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow()
    ).cost,
  );
  t.ok(cost > 0);

  const page = (await credits(user.web)).json();
  t.has(page.entries, [{ kind: 'usage' }, { kind: 'purchase', amountUsd: 2, note: 'Credits' }]);
  const used = page.entries
    .filter((e: { kind: string }) => e.kind === 'usage')
    .reduce((sum: number, e: { amountUsd: number }) => sum + e.amountUsd, 0);
  t.ok(Math.abs(used + cost) < 1e-7, 'what the calls cost beyond the (zero) allowance left the credits');
  t.ok(Math.abs(page.balanceUsd - (2 - cost)) < 1e-7, 'balance is the sum');
  t.match(await monthUsage(systemDb(), user.id, { allowances: new Map([['solo', 0]]) }), {
    monthUsd: cost,
    includedUsd: 0,
  });
});

t.test('within the allowance no credit is spent', async (t) => {
  const user = await subscribedUser('collective');
  const agent = await hostedAgentOf(user.id);
  t.equal((await agentCall(agent.key)).statusCode, 200);
  await app.usageWriter.flush();
  t.same((await credits(user.web)).json(), { balanceUsd: 0, entries: [], nextCursor: null });
});

t.test(
  "limits per user and per agent answer 402 BUDGET_EXCEEDED; only the user's own agents can be limited",
  async (t) => {
    const user = await subscribedUser('collective');
    const first = await hostedAgentOf(user.id);
    const second = await hostedAgentOf(user.id);
    const put = (payload: object, headers = user.web) =>
      app.inject({ method: 'PUT', url: '/api/billing/limits', headers, payload });
    t.same((await app.inject({ method: 'GET', url: '/api/billing/limits', headers: user.web })).json(), {
      monthlyUsd: null,
      agents: [],
    });

    const saved = await put({ monthlyUsd: null, agents: [{ agentId: first.agentId, monthlyUsd: 0 }] });
    t.same(saved.json(), { monthlyUsd: null, agents: [{ agentId: first.agentId, monthlyUsd: 0 }] });
    const refused = await agentCall(first.key);
    t.equal(refused.statusCode, 402);
    t.has(refused.json(), { code: 'BUDGET_EXCEEDED' });
    t.equal((await agentCall(second.key)).statusCode, 200, 'the other agent is not limited');

    t.equal((await put({ monthlyUsd: 0, agents: [] })).statusCode, 200);
    t.has((await agentCall(second.key)).json(), { code: 'BUDGET_EXCEEDED' });
    t.has((await backendCall(user, 'collective')).json(), { code: 'BUDGET_EXCEEDED' }, 'the backend surface too');
    t.equal((await put({ monthlyUsd: 100, agents: [] })).statusCode, 200);
    t.equal((await agentCall(first.key)).statusCode, 200, 'raised limits count on the next call');

    const stranger = await subscribedUser('collective');
    const theirs = await hostedAgentOf(stranger.id);
    const notMine = await put({ monthlyUsd: 1, agents: [{ agentId: theirs.agentId, monthlyUsd: 0 }] });
    t.equal(notMine.statusCode, 404);
    t.match(notMine.json(), { error: String });
    t.same(await spendingLimits(systemDb(), user.id), { monthlyUsd: 100, agents: [] }, 'nothing changed');
    t.same(await spendingLimits(systemDb(), stranger.id), { monthlyUsd: null, agents: [] });
    for (const bad of [
      { monthlyUsd: -1, agents: [] },
      { monthlyUsd: 1 },
      { monthlyUsd: 1, agents: [{ agentId: 'nope', monthlyUsd: 1 }] },
      { monthlyUsd: 1, agents: [], extra: 1 },
    ]) {
      const res = await put(bad);
      t.equal(res.statusCode, 400, JSON.stringify(bad));
      t.match(res.json(), { error: String });
    }
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/billing/limits', headers: identityHeaders() })).statusCode,
      401,
    );
  },
);

t.test('the ledger is append-only, each user sees only their own, and pages by cursor', async (t) => {
  const user = await subscribedUser('solo');
  const other = await subscribedUser('solo');
  for (let i = 0; i < 5; i++)
    await addCreditEntry(systemDb(), {
      userId: user.id,
      kind: i === 4 ? 'refund' : 'grant',
      amountUsd: 1,
      note: `entry ${i}`,
      source: `test:${randomUUID()}`,
    });
  const pages: { entries: { note: string }[]; nextCursor: string | null }[] = [];
  let cursor = '';
  do {
    const res = await credits(user.web, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    t.equal(res.statusCode, 200);
    pages.push(res.json());
    cursor = pages.at(-1)!.nextCursor ?? '';
  } while (cursor);
  t.same(
    pages.flatMap((p) => p.entries.map((e) => e.note)),
    ['entry 4', 'entry 3', 'entry 2', 'entry 1', 'entry 0'],
    'newest first, each once',
  );
  t.equal((await credits(user.web)).json().balanceUsd, 3, 'a refund takes');
  t.equal((await credits(user.web, '?cursor=bm9wZQ')).statusCode, 400);
  t.equal((await credits(user.web, '?limit=0')).statusCode, 400);
  t.same((await credits(other.web)).json().entries, [], 'another user sees none of them');

  const seen = await withUser(appDb(), other.id, (trx) =>
    trx.selectFrom('credit_entries').select('id').where('user_id', '=', user.id).execute(),
  );
  t.same(seen, [], 'RLS hides them from the runtime role');
  await t.rejects(
    withUser(appDb(), user.id, (trx) =>
      trx.updateTable('credit_entries').set({ amount_usd: '1000' }).where('user_id', '=', user.id).execute(),
    ),
    /permission denied/,
    'no update',
  );
  await t.rejects(
    withUser(appDb(), user.id, (trx) => trx.deleteFrom('credit_entries').where('user_id', '=', user.id).execute()),
    /permission denied/,
    'no delete',
  );
  await t.rejects(
    systemDb().updateTable('credit_entries').set({ note: 'x' }).where('user_id', '=', user.id).execute(),
    /permission denied/,
    'not even the system role',
  );
  t.equal(await creditBalanceUsd(systemDb(), user.id), 3);
});

t.test("a hosted agent's body reaches the provider with only the fields the gateway accounts for", async (t) => {
  const user = await subscribedUser('collective');
  const agent = await hostedAgentOf(user.id);
  const res = await agentCall(agent.key, {
    ...ask,
    n: 5,
    service_tier: 'priority',
    store: true,
    models: ['openai/gpt-4o', 'anthropic/claude-opus-4-1'],
    plugins: [{ id: 'web' }],
    metadata: { a: 'b' },
    temperature: 0.2,
    seed: 7,
    stop: ['\n\n'],
    user: 'end-user-1',
  });
  t.equal(res.statusCode, 200, res.body);
  const body = providers.delivered.at(-1)!.body;
  for (const field of ['n', 'service_tier', 'store', 'models', 'plugins', 'metadata'])
    t.notOk(field in body, `${field} is not forwarded`);
  t.match(body, {
    model: /^gpt-4o-mini$/,
    messages: ask.messages,
    temperature: 0.2,
    seed: 7,
    stop: ['\n\n'],
    user: /^end-user-1$/,
  });
  t.equal(body.max_tokens, 4096, 'a call without max_tokens is bounded to what was reserved');
});

t.test('with SPENDING_ENFORCED=false nothing is reserved nor refused, and usage is still recorded', async (t) => {
  const open = await build(t, { ...providers.env, PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0', SPENDING_ENFORCED: 'false' });
  const user = await subscribedUser('solo');
  const agent = await hostedAgentOf(user.id);
  const res = await open.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: agentHeaders(agent.key),
    payload: ask,
  });
  t.equal(res.statusCode, 200, res.body);
  t.equal(
    (
      await open.inject({
        method: 'POST',
        url: '/api/ai/chat',
        headers: backendHeaders({ userId: user.id, plan: 'solo', subscription: user.subscription }),
        payload: ask,
      })
    ).statusCode,
    200,
  );
  await open.usageWriter.flush();
  const rows = await systemDb().selectFrom('usage_events').select('id').where('user_id', '=', user.id).execute();
  t.equal(rows.length, 2);
  t.same((await credits(user.web)).json().entries, [], 'no budget, no usage entries');
});
