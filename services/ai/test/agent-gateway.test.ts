import t from 'tap';
import { identityHeaders, systemDb } from '@agentyard/testing';
import { activeSubscriptionRow, agentHeaders as headers, agentWithKey, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);

const complete = (key: string, body: object) =>
  app.inject({ method: 'POST', url: '/v1/chat/completions', headers: headers(key), payload: body });

t.test('an unknown or missing key is 401', async (t) => {
  t.equal((await complete('ag_nope', { messages: [{ role: 'user', content: 'hi' }] })).statusCode, 401);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: identityHeaders({ surface: 'backend' }),
    payload: { messages: [{ role: 'user', content: 'hi' }] },
  });
  t.equal(res.statusCode, 401);
});

t.test('the owner needs an active subscription (the plan comes from it)', async (t) => {
  const free = await agentWithKey('free');
  t.equal(
    (await complete(free.key, { messages: [{ role: 'user', content: 'hi' }] })).json().code,
    'SUBSCRIPTION_REQUIRED',
  );
  const unpaid = await agentWithKey('free');
  await activeSubscriptionRow(unpaid.user.id, 'solo', 'canceled');
  const res = await complete(unpaid.key, { messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.statusCode, 402);
  t.equal(res.json().code, 'SUBSCRIPTION_REQUIRED');
});

t.test('a subscribed agent chats in the OpenAI format; tools pass through; usage is billed to the agent', async (t) => {
  const agent = await agentWithKey('solo');
  const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
  const res = await complete(agent.key, {
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools,
  });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), {
    object: /^chat\.completion$/,
    model: /^openai\/gpt-4o-mini$/,
    choices: [{ message: { content: 'Hello from the local provider' } }],
    usage: { total_tokens: 18 },
  });
  const delivered = providers.delivered.at(-1)!;
  t.same(delivered.body.tools, tools);
  t.equal(delivered.body.model, 'gpt-4o-mini');
  t.equal(delivered.headers.authorization, 'Bearer test-openai-key', 'the agent key never reaches the provider');

  const restricted = await complete(agent.key, {
    model: 'anthropic/claude-opus-4-1',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(restricted.statusCode, 403);
  t.equal(restricted.json().code, 'MODEL_RESTRICTED');

  const streamed = await complete(agent.key, {
    model: 'google/gemini-2.5-flash',
    stream: true,
    messages: [
      { role: 'system', content: 'brief' },
      { role: 'user', content: 'hi' },
    ],
  });
  t.match(streamed.body, /data: \[DONE\]/);

  await app.usageWriter.flush();
  const rows = await systemDb()
    .selectFrom('usage_events')
    .select(['agent_id', 'user_id', 'model'])
    .where('agent_id', '=', agent.agentId)
    .execute();
  t.equal(rows.length, 2);
  t.ok(rows.every((r) => r.user_id === agent.user.id));
});

t.test("a subscriber's agent thinks on its owner's subscription's plan: solo's models and none beyond", async (t) => {
  const agent = await agentWithKey('free');
  await activeSubscriptionRow(agent.user.id, 'solo');
  const res = await complete(agent.key, { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.statusCode, 200, res.body);
  const models = await app.inject({ method: 'GET', url: '/v1/models', headers: headers(agent.key) });
  t.equal(models.json().data.length, 3, "solo's models");
  const beyond = await complete(agent.key, { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(beyond.json().code, 'MODEL_RESTRICTED', 'and no model beyond solo');
});

t.test(
  "no model given: the agent's provider's primary when the plan allows it; /v1/models lists the plan",
  async (t) => {
    const agent = await agentWithKey('collective', 'groq');
    const res = await complete(agent.key, { messages: [{ role: 'user', content: 'hi' }] });
    t.equal(res.json().model, 'meta-llama/llama-3.3-70b-versatile');
    t.equal(providers.delivered.at(-1)!.path, '/groq/v1/chat/completions');
    const models = await app.inject({ method: 'GET', url: '/v1/models', headers: headers(agent.key) });
    t.equal(models.json().object, 'list');
    t.equal(models.json().data.length, 5);
  },
);

t.test(
  'an owner listed in ADMIN_EMAILS is admin (every model, no subscription) only once their address is verified',
  async (t) => {
    const unverified = await agentWithKey('free');
    const verified = await agentWithKey('free');
    await systemDb()
      .updateTable('users')
      .set({ email_verified_at: new Date() })
      .where('id', '=', verified.user.id)
      .execute();
    const admins = await build(t, {
      ...providers.env,
      ADMIN_EMAILS: `${unverified.user.email},${verified.user.email}`,
    });
    const call = (key: string) =>
      admins.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: headers(key),
        payload: { model: 'anthropic/claude-opus-4-1', messages: [{ role: 'user', content: 'hi' }] },
      });
    const refused = await call(unverified.key);
    t.has(
      [refused.statusCode, refused.json()],
      [402, { code: 'SUBSCRIPTION_REQUIRED' }],
      'a listed but unverified address is an ordinary user without a plan',
    );
    const served = await call(verified.key);
    t.equal(served.statusCode, 200, served.body);
  },
);

// The line OpenClaw 2026.9.6 ends a turn's system prompt with (turn-origin.ts); on the OpenAI chat
// wire it travels at the end of the first user message, where it was moved out of the system prompt.
const runtimeLine = (session: string, channel: string) =>
  `Runtime: agent=main | session=${session} | host=agent | os=Linux 6.1 (x64) | node=v24.21.0 | model=agentyard/openai/gpt-4o-mini | shell=bash | channel=${channel} | capabilities=none`;

t.test(
  "a turn one of the agent's channels started names the channel on its usage rows; the console's chat, hooks and a quoted line do not",
  async (t) => {
    const agent = await agentWithKey('collective', 'anthropic');
    const chatTurn = (firstUser: unknown, system = 'You are a personal assistant running inside OpenClaw.') => ({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: firstUser },
        { role: 'assistant', content: 'Earlier answer' },
        { role: 'user', content: 'Which kestrel hovers best?' },
      ],
    });
    const sent = [
      // A Telegram direct message (the platform's per-channel-peer scope), the line moved to the first user message.
      chatTurn(`Hi there\n\n${runtimeLine('agent:main:telegram:direct:4242', 'telegram')}`),
      // A Telegram group, the first user message in parts.
      chatTurn([
        { type: 'text', text: 'Hello group' },
        { type: 'text', text: runtimeLine('agent:main:telegram:group:-1001', 'telegram') },
      ]),
      // A direct message under the per-peer scope, the line left in the system prompt.
      chatTurn('Hi', `You are a personal assistant.\n## Runtime\n${runtimeLine('agent:main:direct:4242', 'telegram')}`),
      // The console's chat (OpenClaw's OpenAI endpoint: webchat).
      chatTurn(`Hi\n\n${runtimeLine('agent:main:agentyard:web:someone', 'webchat')}`),
      // A scheduled prompt through the hooks, delivered to the last channel.
      chatTurn(`Report\n\n${runtimeLine('agent:main:scheduled:task-1', 'telegram')}`),
      // A console user quoting a channel's line: OpenClaw's own line comes after it.
      chatTurn(
        `${runtimeLine('agent:main:telegram:direct:1', 'telegram')}\n\n${runtimeLine('agent:main:agentyard:web:someone', 'webchat')}`,
      ),
      // No system prompt at all (a caller other than OpenClaw).
      {
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: runtimeLine('agent:main:telegram:direct:1', 'telegram') }],
      },
    ];
    for (const body of sent) t.equal((await complete(agent.key, body)).statusCode, 200);
    const claude = (system: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/messages',
        headers: headers(agent.key),
        payload: {
          model: 'claude-haiku-4-5',
          max_tokens: 64,
          system: [{ type: 'text', text: system }],
          messages: [{ role: 'user', content: 'Which kestrel hovers best?' }],
        },
      });
    t.equal(
      (await claude(`Assistant.\n## Runtime\n${runtimeLine('agent:main:telegram:direct:4242', 'telegram')}`))
        .statusCode,
      200,
    );
    t.equal((await claude(`Assistant.\n## Runtime\n${runtimeLine('agent:main:main', 'webchat')}`)).statusCode, 200);

    await app.usageWriter.flush();
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['model', 'channel'])
      .where('agent_id', '=', agent.agentId)
      .orderBy('occurred_at')
      .execute();
    t.same(
      rows.map((r) => r.channel),
      ['telegram', 'telegram', 'telegram', null, null, null, null, 'telegram', null],
    );
  },
);
