import t, { type Test } from 'tap';
import { once } from 'node:events';
import { identityHeaders, systemDb } from '@agentyard/testing';
import { addCreditEntry } from '../src/domain/spending/index.ts';
import { agentHeaders, agentWithKey, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// A call whose every provider attempt failed (retries and fallback) is a usage row of its own:
// nothing billed, outcome `failed`, its attempts in the detail, counted in the rollups.
// Collective includes no allowance here, so the agent's calls draw on its owner's $1 of credits.
const providers = await startLocalProviders(t);
const app = await build(t, {
  ...providers.env,
  PROVIDER_RETRY_BASE_MS: '1',
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:0,label:40,network:150',
});
if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

async function fundedAgent() {
  const agent = await agentWithKey('collective', 'anthropic');
  await addCreditEntry(systemDb(), {
    userId: agent.user.id,
    kind: 'purchase',
    amountUsd: 1,
    note: 'Credits',
    source: `test:${crypto.randomUUID()}`,
  });
  return { ...agent, web: identityHeaders({ userId: agent.user.id, email: agent.user.email }) };
}
type Agent = Awaited<ReturnType<typeof fundedAgent>>;

const post = (agent: { key: string }, url: string, payload: object) =>
  app.inject({
    method: 'POST',
    url,
    headers: { ...agentHeaders(agent.key), 'x-api-key': agent.key, 'anthropic-version': '2023-06-01' },
    payload,
  });
const rowsOf = async (agent: { agentId: string }) => {
  await app.usageWriter.flush();
  const rows = await systemDb()
    .selectFrom('usage_events')
    .selectAll()
    .where('agent_id', '=', agent.agentId)
    .orderBy('occurred_at')
    .execute();
  return rows.map((row) => ({
    model: row.model,
    outcome: row.outcome,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    cost_usd: Number(row.cost_usd),
    attempts: row.detail?.attempts.map(({ model, status, outcome }) => `${model} ${status} ${outcome}`),
  }));
};
const failedRow = (model: string, attempts: string[]) => ({
  model,
  outcome: 'failed',
  input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
  attempts,
});
const times = <T>(n: number, attempt: T): T[] => Array.from({ length: n }, () => attempt);

/** What the owner's budget and usage pages say: nothing spent, the credits whole, the calls counted. */
async function ownerSees(t: Test, agent: Agent, calls: number, failedCalls: number) {
  const costs = (
    await app.inject({ method: 'GET', url: '/api/mission-control/fleet/costs', headers: agent.web })
  ).json();
  t.match(costs.budget, { spentUsd: 0, leftUsd: 1 }, 'the budget is as it was');
  t.match(costs.agents, [{ agentId: agent.agentId, aiCostUsd: 0, calls, tokens: 0 }]);
  const credits = (await app.inject({ method: 'GET', url: '/api/credits', headers: agent.web })).json();
  t.has(credits.entries, [{ kind: 'purchase', amountUsd: 1 }], 'no usage entry in the credits ledger');
  t.equal(credits.entries.length, 1);
  const summary = (await app.inject({ method: 'GET', url: '/api/usage/summary', headers: agent.web })).json();
  t.match(
    summary.usage,
    { calls, failedCalls, costUsd: 0, totalTokens: 0, turns: 0 },
    "the owner's usage counts the failed calls",
  );
}

t.beforeEach(() => {
  providers.failNext.clear();
  providers.behaviour.clear();
});

t.test(
  'chat that fails on every retry and on the fallback ends in the provider error, and is recorded as a failed call',
  async (t) => {
    const agent = await fundedAgent();
    for (const stream of [false, true]) {
      providers.failNext.set('gpt-4o-mini', { status: 503, times: 3 });
      providers.failNext.set('gemini-2.5-flash', { status: 429, times: 3 });
      const res = await post(agent, '/v1/chat/completions', {
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        stream,
      });
      t.equal(res.statusCode, 500, res.body);
      t.same(res.json(), { error: 'AI provider request failed' });
    }
    const attempts = [...times(3, 'openai/gpt-4o-mini 503 failed'), ...times(3, 'google/gemini-2.5-flash 429 failed')];
    t.same(
      await rowsOf(agent),
      [failedRow('openai/gpt-4o-mini', attempts), failedRow('openai/gpt-4o-mini', attempts)],
      'plain and streamed',
    );
    const [daily] = await systemDb()
      .selectFrom('usage_daily')
      .select(['calls', 'failed_calls', 'cost_usd', 'total_tokens'])
      .where('agent_id', '=', agent.agentId)
      .execute();
    t.match(daily, { calls: 2, failed_calls: 2, total_tokens: 0 });
    t.equal(Number(daily!.cost_usd), 0);
    await ownerSees(t, agent, 2, 2);

    const served = await post(agent, '/v1/chat/completions', {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    t.equal(served.statusCode, 200, 'the failed calls held nothing of the budget back');
    t.match((await rowsOf(agent)).at(-1), { outcome: /^served$/, attempts: ['openai/gpt-4o-mini 200 served'] });
    const dashboard = (
      await app.inject({ method: 'GET', url: '/api/dashboard/cost?period=7d', headers: agent.web })
    ).json();
    t.match(
      dashboard.summary,
      { totalCalls: 3, avgCostPerCall: dashboard.summary.totalCost },
      'the calls count the failed ones; the average cost is per call served',
    );
    t.ok(dashboard.summary.totalCost > 0);
    t.match(dashboard.agents, [{ calls: 3, avgCostPerCall: dashboard.summary.totalCost }]);
  },
);

t.test('every passed-through wire records its failed call the same way', async (t) => {
  const agent = await fundedAgent();
  const wires = [
    {
      url: '/v1/embeddings',
      status: 503,
      upstream: 'text-embedding-3-small',
      model: 'openai/text-embedding-3-small',
      body: { model: 'openai/text-embedding-3-small', input: 'hello' },
    },
    {
      url: '/v1/responses',
      status: 503,
      upstream: 'gpt-4o-mini',
      model: 'openai/gpt-4o-mini',
      body: { model: 'openai/gpt-4o-mini', input: 'hello' },
    },
    {
      url: '/v1/messages',
      status: 529,
      upstream: 'claude-haiku-4-5',
      model: 'anthropic/claude-haiku-4-5',
      body: { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] },
    },
    {
      url: '/v1/messages',
      status: 529,
      upstream: 'claude-haiku-4-5',
      model: 'anthropic/claude-haiku-4-5',
      body: { model: 'claude-haiku-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hello' }] },
    },
  ];
  for (const wire of wires) {
    providers.failNext.set(wire.upstream, { status: wire.status, times: 3 });
    const res = await post(agent, wire.url, wire.body);
    t.equal(res.statusCode, 500, `${wire.url}: ${res.body}`);
    t.same(res.json(), { error: 'AI provider request failed' });
  }
  t.same(
    await rowsOf(agent),
    wires.map((wire) => failedRow(wire.model, times(3, `${wire.model} ${wire.status} failed`))),
  );
  await ownerSees(t, agent, wires.length, wires.length);
});

t.test("the caller's own mistakes and refused admissions are no failed calls: nothing is recorded", async (t) => {
  const agent = await fundedAgent();
  const broke = await agentWithKey('collective', 'anthropic');
  const before = providers.delivered.length;
  for (const [who, url, body, status] of [
    // A tool result naming no tool call of an earlier turn cannot be translated for Anthropic.
    [
      agent,
      '/v1/chat/completions',
      {
        model: 'anthropic/claude-haiku-4-5',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_nobody', content: '42' },
        ],
      },
      400,
    ],
    // Server tools of the Responses API cannot be priced: refused before any reservation.
    [agent, '/v1/responses', { model: 'openai/gpt-4o-mini', input: 'hi', tools: [{ type: 'web_search' }] }, 400],
    // No allowance and no credits: refused at admission.
    [broke, '/v1/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, 402],
    [broke, '/v1/embeddings', { model: 'openai/text-embedding-3-small', input: 'hello' }, 402],
  ] as const) {
    const res = await post(who, url, body);
    t.equal(res.statusCode, status, `${url}: ${res.body}`);
  }
  t.equal(providers.delivered.length, before, 'none reached a provider');
  t.same(await rowsOf(agent), [], 'no usage row');
  t.same(await rowsOf(broke), [], 'no usage row');
});

t.test(
  'the owner lists their calls with every attempt, failed ones apart, in pages; no one else sees them',
  async (t) => {
    const agent = await fundedAgent();
    const other = await fundedAgent();
    providers.failNext.set('gpt-4o-mini', { status: 503, times: 3 });
    providers.failNext.set('gemini-2.5-flash', { status: 429, times: 3 });
    const chat = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    t.equal((await post(agent, '/v1/chat/completions', chat)).statusCode, 500);
    // Rows are stamped in milliseconds: the served call must come a millisecond later for the order checks below.
    const failedBy = Date.now();
    while (Date.now() <= failedBy) await new Promise((resolve) => setImmediate(resolve));
    t.equal((await post(agent, '/v1/chat/completions', chat)).statusCode, 200);
    await app.usageWriter.flush();
    const list = (query: string, headers = agent.web) =>
      app.inject({ method: 'GET', url: `/api/usage/calls${query}`, headers });

    const failed = await list(`?outcome=failed&agentId=${agent.agentId}`);
    t.equal(failed.statusCode, 200, failed.body);
    const attempt = (model: string, provider: string, status: number) => ({
      model,
      provider,
      status,
      outcome: /^failed$/,
      ms: Number,
    });
    t.match(failed.json(), {
      calls: [
        {
          agentId: agent.agentId,
          model: /^openai\/gpt-4o-mini$/,
          outcome: /^failed$/,
          inputTokens: 0,
          outputTokens: 0,
          costUsd: 0,
          attempts: [
            ...times(3, attempt('openai/gpt-4o-mini', 'openai', 503)),
            ...times(3, attempt('google/gemini-2.5-flash', 'gemini', 429)),
          ],
        },
      ],
      nextCursor: null,
    });
    t.equal(failed.json().calls.length, 1, 'only the failed call');
    t.equal(failed.json().calls[0].attempts.length, 6);

    const all = (await list('')).json();
    t.same(
      all.calls.map((c: { outcome: string }) => c.outcome),
      ['served', 'failed'],
      'newest first, served and failed',
    );
    t.has(all.calls[0], {
      outcome: 'served',
      attempts: [{ model: 'openai/gpt-4o-mini', status: 200, outcome: 'served' }],
    });
    t.ok(all.calls[0].costUsd > 0);

    const first = (await list('?limit=1')).json();
    t.equal(first.calls.length, 1);
    t.type(first.nextCursor, 'string');
    const second = (await list(`?limit=1&cursor=${first.nextCursor}`)).json();
    t.same(
      [first.calls[0].id, second.calls[0].id],
      all.calls.map((c: { id: string }) => c.id),
      'the pages walk the list once',
    );
    t.equal(second.nextCursor, null);

    const at = Date.parse(all.calls[1].at);
    const inRange = (
      await list(`?since=${new Date(at).toISOString()}&until=${new Date(Date.parse(all.calls[0].at)).toISOString()}`)
    ).json();
    t.same(
      inRange.calls.map((c: { id: string }) => c.id),
      [all.calls[1].id],
      'since inclusive, until exclusive',
    );

    t.same(
      (await list(`?agentId=${agent.agentId}`, other.web)).json(),
      { calls: [], nextCursor: null },
      "another user's agent: nothing",
    );
    t.same(
      (await list('', other.web)).json(),
      { calls: [], nextCursor: null },
      'another user has no calls of their own',
    );

    for (const query of [
      '?outcome=lost',
      '?cursor=bm9wZQ',
      `?cursor=${first.nextCursor}x`,
      '?limit=0',
      '?limit=101',
      '?since=yesterday',
      `?since=${all.calls[0].at}&until=${all.calls[1].at}`,
      '?agentId=a%20b',
    ]) {
      const res = await list(query);
      t.equal(res.statusCode, 400, `${query}: ${res.body}`);
      t.type(res.json().error, 'string');
    }
    t.equal((await rowsOf(agent)).length, 2, 'nothing changed');
    t.equal((await list('', {})).statusCode, 401, 'signed-in users only');
  },
);
