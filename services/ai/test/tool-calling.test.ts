import t from 'tap';
import { systemDb } from '@agentyard/testing';
import { activeSubscriptionRow, agentHeaders, agentWithKey, backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);
const agent = await agentWithKey('network');
await activeSubscriptionRow(agent.user.id);

type Chunk = {
  choices?: { delta?: { content?: string; tool_calls?: ToolCallPiece[] }; finish_reason?: string | null }[];
  error?: unknown;
};
type ToolCallPiece = { index: number; id?: string; type?: string; function: { name?: string; arguments: string } };

const complete = (body: object) =>
  app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(agent.key), payload: body });
function events(body: string): (Chunk | '[DONE]')[] {
  return body
    .split('\n\n')
    .filter(Boolean)
    .map((block) => block.replace(/^data: /, ''))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}
/** The tool calls of a stream, its pieces joined by index as OpenAI clients do. */
function streamedCalls(chunks: (Chunk | '[DONE]')[]) {
  const calls: { id?: string; type?: string; name?: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    if (chunk === '[DONE]') continue;
    for (const piece of chunk.choices?.[0]?.delta?.tool_calls ?? []) {
      const call = (calls[piece.index] ??= { arguments: '' });
      if (piece.id) Object.assign(call, { id: piece.id, type: piece.type });
      if (piece.function.name) call.name = piece.function.name;
      call.arguments += piece.function.arguments;
    }
  }
  return calls;
}
const finishReasons = (chunks: (Chunk | '[DONE]')[]) =>
  chunks.flatMap((c) => (c !== '[DONE]' && c.choices?.[0]?.finish_reason ? [c.choices[0].finish_reason] : []));

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name' } },
      required: ['city'],
    },
  },
};
const clockTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };
const question = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris and London?' },
];

t.test(
  'Anthropic: tools go out as Messages tools, the tool_use comes back as OpenAI tool_calls, results go back as tool_result blocks',
  async (t) => {
    providers.behaviour.set('claude-sonnet-4-5', 'tool');
    t.teardown(() => providers.behaviour.clear());
    const res = await complete({
      model: 'anthropic/claude-sonnet-4-5',
      messages: question,
      tools: [weatherTool, clockTool],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    t.equal(res.statusCode, 200, res.body);
    const sent = providers.delivered.at(-1)!.body;
    t.same(sent.tools, [
      { name: 'get_weather', description: 'Current weather of a city', input_schema: weatherTool.function.parameters },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ]);
    t.same(sent.tool_choice, { type: 'any', disable_parallel_tool_use: true });
    t.equal(sent.system, 'Be brief.');
    t.same(sent.messages, [{ role: 'user', content: 'Weather in Paris and London?' }]);

    const answer = res.json();
    t.match(answer, {
      object: /^chat\.completion$/,
      model: /^anthropic\/claude-sonnet-4-5$/,
      choices: [{ finish_reason: /^tool_calls$/, message: { role: /^assistant$/, content: 'Let me look.' } }],
    });
    t.same(answer.choices[0].message.tool_calls, [
      { id: 'toolu_local_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);

    // The agent runs the call (and one more of its own), then sends the results back.
    providers.behaviour.clear();
    const london = {
      id: 'toolu_local_2',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"London"}' },
    };
    const next = await complete({
      model: 'anthropic/claude-sonnet-4-5',
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [
        ...question,
        { ...answer.choices[0].message, tool_calls: [...answer.choices[0].message.tool_calls, london] },
        { role: 'tool', tool_call_id: 'toolu_local_1', content: '18°C, sunny' },
        { role: 'tool', tool_call_id: 'toolu_local_2', content: [{ type: 'text', text: '12°C, rain' }] },
        { role: 'user', content: 'And tomorrow?' },
      ],
    });
    t.equal(next.statusCode, 200, next.body);
    t.equal(next.json().choices[0].message.content, 'Hello from the local provider');
    const back = providers.delivered.at(-1)!.body;
    t.same(back.tool_choice, { type: 'tool', name: 'get_weather' });
    t.same(
      back.messages,
      [
        { role: 'user', content: 'Weather in Paris and London?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_local_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_local_2', name: 'get_weather', input: { city: 'London' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_local_1', content: '18°C, sunny' },
            { type: 'tool_result', tool_use_id: 'toolu_local_2', content: '12°C, rain' },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
      'tool results merged into one user turn, ahead of its text',
    );

    const none = await complete({
      model: 'anthropic/claude-sonnet-4-5',
      messages: question,
      tools: [weatherTool],
      tool_choice: 'none',
    });
    t.equal(none.statusCode, 200);
    t.same(providers.delivered.at(-1)!.body.tool_choice, { type: 'none' });
  },
);

t.test('Anthropic stream: content_block_start and input_json_delta become OpenAI tool_calls pieces', async (t) => {
  providers.behaviour.set('claude-sonnet-4-5', 'tool');
  t.teardown(() => providers.behaviour.clear());
  const res = await complete({
    model: 'anthropic/claude-sonnet-4-5',
    stream: true,
    messages: question,
    tools: [weatherTool],
  });
  t.equal(res.statusCode, 200);
  const chunks = events(res.body);
  t.equal(chunks.at(-1), '[DONE]');
  t.same(streamedCalls(chunks), [
    { id: 'toolu_local_1', type: 'function', name: 'get_weather', arguments: '{"city": "Paris"}' },
  ]);
  t.same(JSON.parse(streamedCalls(chunks)[0]!.arguments), { city: 'Paris' });
  t.same(finishReasons(chunks), ['tool_calls']);
  t.equal(chunks.map((c) => (c === '[DONE]' ? '' : (c.choices?.[0]?.delta?.content ?? ''))).join(''), 'Let me look.');
  t.same(providers.delivered.at(-1)!.body.tools, [
    { name: 'get_weather', description: 'Current weather of a city', input_schema: weatherTool.function.parameters },
  ]);
});

t.test(
  'Gemini: functionDeclarations in the accepted schema subset, functionCall parts as tool_calls, results as functionResponse parts',
  async (t) => {
    providers.behaviour.set('gemini-2.5-flash', 'tool');
    t.teardown(() => providers.behaviour.clear());
    const searchTool = {
      type: 'function',
      function: {
        name: 'search_web',
        description: 'Search the web',
        parameters: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          additionalProperties: false,
          properties: {
            query: { type: 'string', minLength: 1, format: 'uri-reference' },
            site: { type: ['string', 'null'], format: 'date-time' },
            mode: { const: 'fast' },
            filters: { $ref: '#/$defs/filters' },
            tags: { type: 'array', items: { type: 'string', enum: ['news', 'blogs'] }, maxItems: 3 },
            ids: { type: 'array' },
            limit: { type: 'integer', exclusiveMinimum: 0, maximum: 50 },
          },
          required: ['query', 'ghost'],
          $defs: {
            filters: {
              type: 'object',
              properties: { lang: { type: 'string', default: 'en' } },
              additionalProperties: { type: 'string' },
            },
          },
        },
      },
    };
    const res = await complete({
      model: 'google/gemini-2.5-flash',
      messages: question,
      tools: [searchTool, weatherTool, clockTool],
      tool_choice: { type: 'function', function: { name: 'search_web' } },
    });
    t.equal(res.statusCode, 200, res.body);
    const sent = providers.delivered.at(-1)!.body;
    t.same(sent.tools, [
      {
        functionDeclarations: [
          {
            name: 'search_web',
            description: 'Search the web',
            parameters: {
              type: 'OBJECT',
              properties: {
                query: { type: 'STRING', minLength: 1 },
                site: { type: 'STRING', nullable: true, format: 'date-time' },
                mode: { type: 'STRING', enum: ['fast'], format: 'enum' },
                filters: { type: 'OBJECT', properties: { lang: { type: 'STRING', default: 'en' } } },
                tags: {
                  type: 'ARRAY',
                  maxItems: 3,
                  items: { type: 'STRING', enum: ['news', 'blogs'], format: 'enum' },
                },
                ids: { type: 'ARRAY', items: { type: 'STRING' } },
                limit: { type: 'INTEGER', maximum: 50 },
              },
              required: ['query'],
            },
          },
          {
            name: 'get_weather',
            description: 'Current weather of a city',
            parameters: {
              type: 'OBJECT',
              properties: { city: { type: 'STRING', description: 'City name' } },
              required: ['city'],
            },
          },
          { name: 'get_time' },
        ],
      },
    ]);
    t.same(sent.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['search_web'] } });

    const message = res.json().choices[0].message;
    t.equal(res.json().choices[0].finish_reason, 'tool_calls');
    t.equal(message.content, 'Let me look.');
    t.equal(message.tool_calls.length, 2);
    t.match(message.tool_calls, [
      {
        id: /^call_/,
        type: /^function$/,
        function: { name: /^search_web$/, arguments: /^\{"city":"Paris"\}$/ },
        extra_content: { google: { thought_signature: /^c2lnbmF0dXJl$/ } },
      },
      { id: /^call_/, type: /^function$/, function: { name: /^search_web$/, arguments: /^\{"city":"London"\}$/ } },
    ]);
    t.notOk('extra_content' in message.tool_calls[1], 'a call without a signature carries none');
    t.not(message.tool_calls[0].id, message.tool_calls[1].id, 'each call its own id');

    providers.behaviour.clear();
    const next = await complete({
      model: 'google/gemini-2.5-flash',
      tools: [searchTool],
      tool_choice: 'auto',
      messages: [
        ...question,
        message,
        { role: 'tool', tool_call_id: message.tool_calls[0].id, content: '{"tempC":18}' },
        { role: 'tool', tool_call_id: message.tool_calls[1].id, content: 'rain all day' },
      ],
    });
    t.equal(next.statusCode, 200, next.body);
    const back = providers.delivered.at(-1)!.body;
    t.same(back.toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
    t.same(back.systemInstruction, { parts: [{ text: 'Be brief.' }] });
    t.same(back.contents, [
      { role: 'user', parts: [{ text: 'Weather in Paris and London?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me look.' },
          { functionCall: { name: 'search_web', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' },
          { functionCall: { name: 'search_web', args: { city: 'London' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'search_web', response: { tempC: 18 } } },
          { functionResponse: { name: 'search_web', response: { result: 'rain all day' } } },
        ],
      },
    ]);
  },
);

t.test('Gemini stream: functionCall parts become tool_calls pieces with ids stable in the answer', async (t) => {
  providers.behaviour.set('gemini-2.5-flash', 'tool');
  t.teardown(() => providers.behaviour.clear());
  const res = await complete({
    model: 'google/gemini-2.5-flash',
    stream: true,
    messages: question,
    tools: [weatherTool],
    tool_choice: 'none',
  });
  t.same(providers.delivered.at(-1)!.body.toolConfig, { functionCallingConfig: { mode: 'NONE' } });
  const chunks = events(res.body);
  t.equal(chunks.at(-1), '[DONE]');
  const calls = streamedCalls(chunks);
  t.match(calls, [
    { id: /^call_/, type: /^function$/, name: /^get_weather$/, arguments: /^\{"city":"Paris"\}$/ },
    { id: /^call_/, type: /^function$/, name: /^get_weather$/, arguments: /^\{"city":"London"\}$/ },
  ]);
  t.equal(new Set(calls.map((c) => c.id)).size, 2);
  t.same(finishReasons(chunks), ['tool_calls']);
});

t.test(
  'a malformed tool call from upstream is a provider failure: fallback, else an error, never a crash',
  async (t) => {
    t.teardown(() => providers.behaviour.clear());
    providers.behaviour.set('claude-sonnet-4-5', 'bad-tool');
    const fellBack = await complete({ model: 'anthropic/claude-sonnet-4-5', messages: question, tools: [weatherTool] });
    t.equal(fellBack.statusCode, 200);
    t.equal(fellBack.json().model, 'openai/gpt-4o-mini', 'served by the fallback');

    providers.behaviour.set('gpt-4o-mini', 'error');
    const failed = await complete({ model: 'anthropic/claude-sonnet-4-5', messages: question, tools: [weatherTool] });
    t.ok(failed.statusCode >= 500, `${failed.statusCode}`);
    t.same(failed.json(), { error: 'AI provider request failed' });

    providers.behaviour.set('gemini-2.5-flash', 'bad-tool');
    providers.behaviour.set('gpt-4o-mini', 'error');
    t.ok(
      (await complete({ model: 'google/gemini-2.5-flash', messages: question, tools: [weatherTool] })).statusCode >=
        500,
    );

    for (const [model, upstream] of [
      ['anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5'],
      ['google/gemini-2.5-flash', 'gemini-2.5-flash'],
    ] as const) {
      providers.behaviour.set(upstream, 'bad-tool');
      const streamed = await complete({ model, stream: true, messages: question, tools: [weatherTool] });
      const chunks = events(streamed.body);
      t.notOk(chunks.includes('[DONE]'), `${upstream}: no clean end`);
      t.match(chunks.at(-1), { error: { message: String } });
    }
    const alive = await complete({ model: 'anthropic/claude-haiku-4-5', messages: question });
    t.equal(alive.statusCode, 200, 'the service still answers');
  },
);

t.test("tool turns the gateway cannot translate are the caller's mistake: 400 whichever provider", async (t) => {
  for (const model of ['anthropic/claude-sonnet-4-5', 'google/gemini-2.5-flash']) {
    const before = providers.delivered.length;
    const orphan = await complete({
      model,
      tools: [weatherTool],
      messages: [...question, { role: 'tool', tool_call_id: 'call_nobody', content: 'x' }],
    });
    t.equal(orphan.statusCode, 400);
    t.match(orphan.json(), { error: /tool_call_id/, code: /^INVALID_TOOL_TURN$/ });
    const badArguments = await complete({
      model,
      tools: [weatherTool],
      messages: [
        ...question,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: 'city=Paris' } }],
        },
      ],
    });
    t.equal(badArguments.statusCode, 400);
    t.match(badArguments.json(), { error: /arguments/, code: /^INVALID_TOOL_TURN$/ });
    t.equal(providers.delivered.length, before, 'nothing reached a provider');
  }
  const badTools = await complete({ model: 'anthropic/claude-sonnet-4-5', messages: question, tools: 'get_weather' });
  t.equal(badTools.statusCode, 400);
  const badChoice = await complete({
    model: 'anthropic/claude-sonnet-4-5',
    messages: question,
    tools: [weatherTool],
    tool_choice: 'sometimes',
  });
  t.equal(badChoice.statusCode, 400);
});

t.test('every call records the tools its answer called; /api/usage/tools sums them per tool', async (t) => {
  const caller = await agentWithKey('network');
  await activeSubscriptionRow(caller.user.id);
  const call = (body: object) =>
    app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(caller.key), payload: body });
  t.teardown(() => providers.behaviour.clear());
  for (const upstream of ['claude-sonnet-4-5', 'gemini-2.5-flash', 'gpt-4o-mini'])
    providers.behaviour.set(upstream, 'tool');
  for (const model of ['anthropic/claude-sonnet-4-5', 'google/gemini-2.5-flash', 'openai/gpt-4o-mini']) {
    t.equal((await call({ model, messages: question, tools: [weatherTool] })).statusCode, 200);
    t.equal((await call({ model, stream: true, messages: question, tools: [clockTool, weatherTool] })).statusCode, 200);
  }
  providers.behaviour.clear();
  t.equal(
    (await call({ model: 'anthropic/claude-sonnet-4-5', messages: question, tools: [weatherTool] })).statusCode,
    200,
    'an answer without tool calls',
  );
  await app.usageWriter.flush();

  const rows = await systemDb()
    .selectFrom('usage_events')
    .select(['model', 'tool_names'])
    .where('agent_id', '=', caller.agentId)
    .execute();
  const recorded = (model: string) =>
    rows
      .filter((r) => r.model === model)
      .map((r) => r.tool_names.join(','))
      .sort();
  t.same(recorded('anthropic/claude-sonnet-4-5'), ['', 'get_time', 'get_weather']);
  t.same(recorded('google/gemini-2.5-flash'), ['get_time,get_time', 'get_weather,get_weather']);
  t.same(recorded('openai/gpt-4o-mini'), ['get_time', 'get_weather']);

  const headers = backendHeaders({ userId: caller.user.id });
  const res = await app.inject({ method: 'GET', url: `/api/usage/tools?days=7&agentId=${caller.agentId}`, headers });
  t.equal(res.statusCode, 200, res.body);
  const today = new Date().toISOString().slice(0, 10);
  t.same(res.json(), {
    days: 7,
    agentId: caller.agentId,
    tools: [
      { tool: 'get_time', calls: 4, answers: 3, lastUsed: today },
      { tool: 'get_weather', calls: 4, answers: 3, lastUsed: today },
    ],
    nextCursor: null,
  });
  const other = await app.inject({
    method: 'GET',
    url: '/api/usage/tools',
    headers: backendHeaders({ userId: crypto.randomUUID() }),
  });
  t.same(other.json(), { days: 30, agentId: null, tools: [], nextCursor: null }, 'another user sees none of them');
  t.equal((await app.inject({ method: 'GET', url: '/api/usage/tools?days=0', headers })).statusCode, 400);
});
