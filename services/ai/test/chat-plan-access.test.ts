import t from 'tap';
import { createUserRow, systemDb } from '@agentyard/testing';
import { activeSubscriptionRow, backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);
const user = await createUserRow({ plan: 'solo' });
const chat = (headers: Record<string, string>, body: object = { messages: [{ role: 'user', content: 'hi' }] }) =>
  app.inject({ method: 'POST', url: '/api/ai/chat', headers, payload: body });

t.test('402 PLAN_REQUIRED without a paid plan header, success:false', async (t) => {
  for (const plan of [undefined, 'free', 'gold']) {
    const res = await chat(backendHeaders({ userId: user.id, plan, subscription: 'sub_whatever' }));
    t.equal(res.statusCode, 402, String(plan));
    t.match(res.json(), { success: false, code: /^PLAN_REQUIRED$/, error: String });
  }
});

t.test('402 SUBSCRIPTION_REQUIRED without an active subscription of the synced table', async (t) => {
  const canceled = await activeSubscriptionRow(user.id, null, 'canceled');
  const soloOnly = await activeSubscriptionRow(user.id, 'solo');
  for (const [subscription, plan] of [
    [undefined, 'solo'],
    ['sub_unknown', 'solo'],
    [canceled, 'solo'],
    [soloOnly, 'network'],
  ] as const) {
    const res = await chat(backendHeaders({ userId: user.id, plan, subscription }));
    t.equal(res.statusCode, 402);
    t.has(res.json(), { success: false, code: 'SUBSCRIPTION_REQUIRED' });
  }
});

t.test("403 MODEL_RESTRICTED names the plan's models; 404 for an unknown model", async (t) => {
  const subscription = await activeSubscriptionRow(user.id, 'solo');
  const res = await chat(backendHeaders({ userId: user.id, plan: 'solo', subscription }), {
    model: 'anthropic/claude-opus-4-1',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(res.statusCode, 403);
  t.same(res.json().allowedModels, [
    'google/gemini-2.5-flash',
    'openai/gpt-4o-mini',
    'meta-llama/llama-3.3-70b-versatile',
  ]);
  t.equal(res.json().code, 'MODEL_RESTRICTED');
  const unknown = await chat(backendHeaders({ userId: user.id, plan: 'solo', subscription }), {
    model: 'nobody/nothing',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(unknown.statusCode, 404);
  const empty = await chat(backendHeaders({ userId: user.id, plan: 'solo', subscription }), { messages: [] });
  t.equal(empty.statusCode, 400);
});

t.test('a subscribed caller chats; the answer has the interface shape and a usage row is written', async (t) => {
  const subscription = await activeSubscriptionRow(user.id, 'solo');
  const res = await chat(backendHeaders({ userId: user.id, plan: 'solo', subscription }), {
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), {
    id: /^chatcmpl-local$/,
    model: /^openai\/gpt-4o-mini$/,
    provider: /^openai$/,
    message: { role: /^assistant$/, content: 'Hello from the local provider' },
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    timestamp: String,
  });
  const delivered = providers.delivered.at(-1)!;
  t.equal(delivered.path, '/openai/v1/chat/completions');
  t.equal(delivered.headers.authorization, 'Bearer test-openai-key');
  t.equal(delivered.body.model, 'gpt-4o-mini');
  await app.usageWriter.flush();
  const row = await systemDb()
    .selectFrom('usage_events')
    .selectAll()
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  t.has(row, {
    model: 'openai/gpt-4o-mini',
    provider: 'openai',
    input_tokens: 11,
    output_tokens: 7,
    total_tokens: 18,
    turn_count: 1,
    agent_id: null,
  });
  t.equal(Number(row.cost_usd), (11 * 0.15 + 7 * 0.6) / 1e6, 'priced from the maintained price list');
  const daily = await systemDb()
    .selectFrom('usage_daily')
    .selectAll()
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  t.match(daily, { calls: 1, total_tokens: 18, model: /^openai\/gpt-4o-mini$/, agent_id: '' });
});

t.test('an admin needs no plan or subscription and gets network models', async (t) => {
  const res = await chat(backendHeaders({ admin: true, email: 'boss@example.test' }), {
    model: 'anthropic/claude-opus-4-1',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(res.statusCode, 200, res.body);
  t.has(res.json(), { model: 'anthropic/claude-opus-4-1', provider: 'anthropic' });
  const delivered = providers.delivered.at(-1)!;
  t.equal(delivered.path, '/anthropic/v1/messages');
  t.equal(delivered.headers['x-api-key'], 'test-anthropic-key');
  t.equal(delivered.headers['anthropic-version'], '2023-06-01');
});

t.test('algorithmMode prepends the 7-phase system prompt unless a system message holds the phases', async (t) => {
  const headers = backendHeaders({ admin: true });
  await chat(headers, {
    model: 'openai/gpt-4o-mini',
    algorithmMode: true,
    messages: [{ role: 'user', content: 'plan a trip' }],
  });
  const sent = providers.delivered.at(-1)!.body.messages as { role: string; content: string }[];
  t.equal(sent.length, 2);
  t.equal(sent[0]!.role, 'system');
  for (const phase of ['Observe', 'Think', 'Plan', 'Build', 'Execute', 'Verify', 'Learn'])
    t.match(sent[0]!.content, phase);
  const own = 'Observe Think Plan Build Execute Verify Learn, my way';
  await chat(headers, {
    model: 'openai/gpt-4o-mini',
    algorithmMode: true,
    messages: [
      { role: 'system', content: own },
      { role: 'user', content: 'x' },
    ],
  });
  t.same((providers.delivered.at(-1)!.body.messages as unknown[]).length, 2);
});

t.test('Gemini wire format: contents, systemInstruction, key header', async (t) => {
  const res = await chat(backendHeaders({ admin: true }), {
    model: 'google/gemini-2.5-flash',
    max_tokens: 50,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'yo' },
      { role: 'user', content: 'again' },
    ],
  });
  t.equal(res.statusCode, 200, res.body);
  t.has(res.json(), {
    model: 'google/gemini-2.5-flash',
    provider: 'gemini',
    usage: { prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 },
  });
  const delivered = providers.delivered.at(-1)!;
  t.equal(delivered.path, '/gemini/v1beta/models/gemini-2.5-flash:generateContent');
  t.equal(delivered.headers['x-goog-api-key'], 'test-gemini-key');
  t.same(delivered.body, {
    contents: [
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ text: 'yo' }] },
      { role: 'user', parts: [{ text: 'again' }] },
    ],
    systemInstruction: { parts: [{ text: 'be brief' }] },
    generationConfig: { maxOutputTokens: 50 },
  });
});
