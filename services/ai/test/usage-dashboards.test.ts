import t from 'tap';
import { createUserRow, identityHeaders, systemDb, walkPages } from '@agentyard/testing';
import { activeSubscriptionRow, backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);
const user = await createUserRow({ plan: 'label' });
const other = await createUserRow({ plan: 'label' });
const subscription = await activeSubscriptionRow(user.id, 'label');
const agent = await systemDb()
  .insertInto('agents')
  .values({
    user_id: user.id,
    name: 'Researcher',
    model: 'x',
    tools_profile: 'coding',
    subdomain: `r-${crypto.randomUUID().slice(0, 8)}`,
    status: 'running',
  })
  .returning('id')
  .executeTakeFirstOrThrow();
await systemDb()
  .insertInto('agents')
  .values({
    user_id: user.id,
    name: 'Idle',
    model: 'x',
    tools_profile: 'coding',
    subdomain: `i-${crypto.randomUUID().slice(0, 8)}`,
    status: 'stopped',
  })
  .execute();

// Real calls through the gateway: 2 on gpt-4o-mini, 1 on claude-sonnet-4-5 (dearer) for the user; one for someone else.
const call = (userId: string, model: string) =>
  app.inject({
    method: 'POST',
    url: '/api/ai/chat',
    headers: backendHeaders({ userId, plan: 'label', subscription }),
    payload: { model, messages: [{ role: 'user', content: 'hi' }] },
  });
await call(user.id, 'openai/gpt-4o-mini');
await call(user.id, 'openai/gpt-4o-mini');
await call(user.id, 'anthropic/claude-sonnet-4-5');
await systemDb()
  .insertInto('usage_events')
  .values({
    id: crypto.randomUUID(),
    user_id: user.id,
    user_ref: user.id,
    agent_id: agent.id,
    model: 'openai/gpt-4o',
    provider: 'openai',
    input_tokens: 1000,
    output_tokens: 1000,
    total_tokens: 2000,
    cost_usd: '0.0125',
    turn_count: 2,
    occurred_at: new Date(),
    day: new Date().toISOString().slice(0, 10),
  })
  .execute();
await systemDb()
  .insertInto('usage_daily')
  .values({
    day: new Date().toISOString().slice(0, 10),
    user_ref: user.id,
    user_id: user.id,
    agent_id: agent.id,
    model: 'openai/gpt-4o',
    provider: 'openai',
    calls: 1,
    unpriced_calls: 0,
    input_tokens: 1000,
    output_tokens: 1000,
    total_tokens: 2000,
    cost_usd: '0.0125',
    turns: 2,
  })
  .execute();
await call(other.id, 'openai/gpt-4o-mini');
await app.usageWriter.flush();

const mini = (11 * 0.15 + 7 * 0.6) / 1e6;
const sonnet = (13 * 3 + 9 * 15) / 1e6;

t.test("cost dashboard: the user's real rows, sorted by cost, every field", async (t) => {
  const res = await app.inject({
    method: 'GET',
    url: '/api/dashboard/cost?period=30d',
    headers: identityHeaders({ userId: user.id, email: 'u@example.test' }),
  });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.equal(body.period, '30d');
  t.equal(body.isMockData, false);
  t.equal(body.summary.totalCalls, 4);
  t.equal(body.summary.totalTokens, 18 * 2 + 22 + 2000);
  t.ok(Math.abs(body.summary.totalCost - (2 * mini + sonnet + 0.0125)) < 1e-6);
  t.same(
    body.agents.map((a: { name: string }) => a.name),
    ['Researcher', 'Direct API'],
  );
  t.has(body.agents[0], { calls: 1, tokens: 2000, model: 'openai/gpt-4o', cost: 0.0125 });
  t.same(
    body.modelBreakdown.map((m: { model: string }) => m.model),
    ['openai/gpt-4o', 'anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini'],
  );
  t.ok(Math.abs(body.modelBreakdown.reduce((s: number, m: { percent: number }) => s + m.percent, 0) - 100) < 0.5);
  t.equal(body.daily.length, 30);
  t.match(body.daily.at(-1).date, /^[A-Z][a-z]{2} \d{1,2}$/);
  t.equal(body.daily.at(-1).tokens, body.summary.totalTokens);
  t.has(body, { plan: 'label', planMonthlyCost: 189.23, agentCount: 2, activeAgents: 1 });
  const def = await app.inject({
    method: 'GET',
    url: '/api/dashboard/cost',
    headers: identityHeaders({ userId: user.id }),
  });
  t.equal(def.json().period, '7d');
  t.equal(def.json().daily.length, 7);
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/dashboard/cost', headers: identityHeaders() })).statusCode,
    401,
  );
});

t.test('another user sees none of it', async (t) => {
  const res = await app.inject({
    method: 'GET',
    url: '/api/dashboard/cost?period=mtd',
    headers: identityHeaders({ userId: other.id }),
  });
  t.equal(res.json().summary.totalCalls, 1);
  t.same(
    res.json().agents.map((a: { name: string }) => a.name),
    ['Direct API'],
  );
});

t.test('backend usage family: summary, by-model, by-agent, daily', async (t) => {
  const headers = backendHeaders({ userId: user.id });
  const summary = (await app.inject({ method: 'GET', url: '/api/usage/summary?days=7', headers })).json();
  t.match(summary, {
    days: 7,
    agentId: null,
    usage: { calls: 4, turns: 5, inputTokens: 11 * 2 + 13 + 1000, outputTokens: 7 * 2 + 9 + 1000 },
  });
  const byModel = (await app.inject({ method: 'GET', url: '/api/usage/by-model', headers })).json();
  t.same(
    byModel.models.map((m: { model: string }) => m.model),
    ['openai/gpt-4o', 'anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini'],
  );
  const byAgent = (await app.inject({ method: 'GET', url: `/api/usage/by-agent/${agent.id}`, headers })).json();
  t.match(byAgent, { agentId: agent.id, usage: { calls: 1, totalTokens: 2000, costUsd: 0.0125 } });
  const daily = (
    await app.inject({ method: 'GET', url: `/api/usage/daily?days=3&agentId=${agent.id}`, headers })
  ).json();
  t.equal(daily.daily.length, 3);
  t.match(daily.daily[2], { date: new Date().toISOString().slice(0, 10), calls: 1 });
  t.equal((await app.inject({ method: 'GET', url: '/api/usage/summary?days=0', headers })).statusCode, 400);
});

t.test(
  'backend usage tools: pages by tool name, none twice, none skipped, while calls arrive between pages',
  async (t) => {
    const caller = await createUserRow();
    const headers = backendHeaders({ userId: caller.id });
    const today = new Date().toISOString().slice(0, 10);
    const record = (tool: string, calls: number) =>
      systemDb()
        .insertInto('usage_tools_daily')
        .values({ day: today, user_ref: caller.id, user_id: caller.id, agent_id: '', tool, calls, answers: 1 })
        .onConflict((oc) =>
          oc
            .columns(['day', 'user_ref', 'agent_id', 'tool'])
            .doUpdateSet((eb) => ({ calls: eb('usage_tools_daily.calls', '+', eb.ref('excluded.calls')) })),
        )
        .execute();
    for (const [tool, calls] of [
      ['search', 9],
      ['browse', 1],
      ['calendar', 5],
      ['shell', 2],
      ['mail', 7],
    ] as const)
      await record(tool, calls);
    const seen: { tool: string; calls: number }[][] = await walkPages(
      async (cursor) => {
        const res = await app.inject({
          method: 'GET',
          url: `/api/usage/tools?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          headers,
        });
        t.equal(res.statusCode, 200);
        return { items: res.json().tools, nextCursor: res.json().nextCursor };
      },
      async (n) => {
        // A tool already passed gets calls (its rank by calls would jump), and a new name arrives behind the cursor.
        await record('browse', 100);
        await record(n === 1 ? 'zsh' : 'translate', 1);
      },
    );
    const names = seen.flat().map((row) => row.tool);
    t.same(
      names,
      ['browse', 'calendar', 'mail', 'search', 'shell', 'translate', 'zsh'],
      'every name once, in order, the new ones where they sort',
    );
    t.same(
      seen.map((p) => p.length),
      [2, 2, 2, 1],
    );
    const last = (await app.inject({ method: 'GET', url: '/api/usage/tools?limit=100', headers })).json();
    t.match(last, { days: 30, agentId: null, nextCursor: null });
    t.match(last.tools[0], { tool: /^browse$/, calls: 301, answers: 1, lastUsed: today });
    for (const cursor of ['not a cursor!', 'Zm9vYm', '_w', 'AA==']) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/usage/tools?cursor=${encodeURIComponent(cursor)}`,
        headers,
      });
      t.equal(res.statusCode, 400, cursor);
    }
    t.equal((await app.inject({ method: 'GET', url: '/api/usage/tools?limit=101', headers })).statusCode, 400);
  },
);

t.test(
  "web usage summary: a signed-in user sees their own usage, never another's, whatever agent they name",
  async (t) => {
    const mine = (
      await app.inject({
        method: 'GET',
        url: '/api/usage/summary?days=7',
        headers: identityHeaders({ userId: user.id }),
      })
    ).json();
    t.match(mine, { days: 7, agentId: null, usage: { calls: 4, turns: 5, inputTokens: 11 * 2 + 13 + 1000 } });
    const ofAgent = (
      await app.inject({
        method: 'GET',
        url: `/api/usage/summary?agentId=${agent.id}`,
        headers: identityHeaders({ userId: user.id }),
      })
    ).json();
    t.match(ofAgent, { agentId: agent.id, usage: { calls: 1, totalTokens: 2000, costUsd: 0.0125 } });
    const theirs = (
      await app.inject({
        method: 'GET',
        url: `/api/usage/summary?agentId=${agent.id}`,
        headers: identityHeaders({ userId: other.id }),
      })
    ).json();
    t.match(
      theirs,
      { agentId: agent.id, usage: { calls: 0, totalTokens: 0, costUsd: 0 } },
      'another user naming the agent sees nothing of it',
    );
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/usage/summary', headers: identityHeaders() })).statusCode,
      401,
    );
  },
);
