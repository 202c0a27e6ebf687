import t from 'tap';
import { identityHeaders, systemDb } from '@agentyard/testing';
import { catalogById } from '../src/domain/model-catalog.ts';
import { messagesMaximum } from '../src/domain/messages-wire.ts';
import { costOf } from '../src/domain/prices.ts';
import { agentWithKey, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);

// Anthropic's clients send their key as `x-api-key`.
const headers = (key: string) => ({
  ...identityHeaders({ surface: 'backend' }),
  'x-api-key': key,
  'anthropic-version': '2023-06-01',
});
const send = (key: string, body: object) =>
  app.inject({ method: 'POST', url: '/v1/messages', headers: headers(key), payload: body });

const LONG_SYSTEM = 'You are a careful assistant. '.repeat(200);
const turn = (question: string, stream = false) => ({
  model: 'claude-haiku-4-5',
  max_tokens: 256,
  stream,
  system: [{ type: 'text', text: LONG_SYSTEM, cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: question }],
});

const rowsOf = async (agentId: string) => {
  await app.usageWriter.flush();
  return systemDb()
    .selectFrom('usage_events')
    .select(['model', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost_usd'])
    .where('agent_id', '=', agentId)
    .orderBy('occurred_at')
    .execute();
};

t.test(
  'a Claude call passes cache_control on; the cached second turn is recorded with its cache read and costs less',
  async (t) => {
    const agent = await agentWithKey('collective', 'anthropic');
    const first = await send(agent.key, turn('What is the capital of France?'));
    t.equal(first.statusCode, 200, first.body);
    t.match(first.json(), {
      type: /^message$/,
      role: /^assistant$/,
      content: [{ type: /^text$/, text: 'Hello from the local provider' }],
    });
    t.ok(first.json().usage.cache_creation_input_tokens > 0, "the provider's own counts come back as sent");
    const delivered = providers.delivered.at(-1)!;
    t.equal(delivered.path, '/anthropic/v1/messages');
    t.equal(delivered.headers['x-api-key'], 'test-anthropic-key', 'the agent key never reaches the provider');
    t.equal(delivered.body.model, 'claude-haiku-4-5');
    t.same((delivered.body.system as { cache_control?: unknown }[])[0]!.cache_control, { type: 'ephemeral' });

    const second = await send(agent.key, turn('And of Italy?'));
    t.equal(second.statusCode, 200, second.body);
    t.ok(second.json().usage.cache_read_input_tokens > 0);

    const [written, read] = await rowsOf(agent.agentId);
    t.ok(written!.cache_write_tokens > 0 && Number(written!.cache_read_tokens) === 0, 'the first turn wrote the cache');
    t.equal(
      Number(read!.cache_read_tokens),
      Number(written!.cache_write_tokens),
      'the second read what the first wrote',
    );
    t.equal(read!.input_tokens, written!.input_tokens, 'both counted every prompt token');
    t.ok(
      Number(read!.cost_usd) < Number(written!.cost_usd),
      `cached turn $${read!.cost_usd} < first turn $${written!.cost_usd}`,
    );
    const haiku = catalogById.get('anthropic/claude-haiku-4-5')!;
    t.equal(
      Number(written!.cost_usd),
      Number(costOf(haiku, written!.input_tokens, 9, { write: Number(written!.cache_write_tokens) })!.toFixed(8)),
      'writes priced at the cache-write rate',
    );

    const summary = await app.inject({
      method: 'GET',
      url: `/api/usage/summary?agentId=${agent.agentId}`,
      headers: identityHeaders({ surface: 'backend', auth: 'service' }),
    });
    t.equal(summary.statusCode, 200, summary.body);
    t.equal(summary.json().usage.cacheReadTokens, Number(read!.cache_read_tokens), 'the summary shows cache reads');
    t.equal(summary.json().usage.cacheWriteTokens, Number(written!.cache_write_tokens));
  },
);

t.test('streamed: the events pass on as Anthropic sent them, and the cache read is recorded', async (t) => {
  const agent = await agentWithKey('collective', 'anthropic');
  const res = await app.inject({
    method: 'POST',
    url: '/v1/messages',
    headers: { ...headers(''), 'x-api-key': '', authorization: `Bearer ${agent.key}` },
    payload: turn('Streamed?', true),
  });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.headers['content-type'], /text\/event-stream/);
  t.match(res.body, /event: message_start\ndata: \{/);
  t.match(res.body, /"cache_read_input_tokens":\d+/, 'the system prompt was cached by the first test');
  t.match(res.body, /event: message_stop/);
  const [row] = await rowsOf(agent.agentId);
  t.ok(Number(row!.cache_read_tokens) > 0);
  t.equal(row!.output_tokens, 9);
});

t.test(
  'a model this wire does not serve is refused with 400 naming those it does; a Claude model beyond the plan is 403',
  async (t) => {
    const agent = await agentWithKey('collective', 'anthropic');
    const res = await send(agent.key, { ...turn('hi'), model: 'openai/gpt-4o-mini' });
    t.equal(res.statusCode, 400);
    t.equal(res.json().code, 'MODEL_NOT_ON_WIRE');
    t.same(res.json().supportedModels, ['anthropic/claude-haiku-4-5']);
    t.match(res.json().error, /anthropic\/claude-haiku-4-5/);
    const beyond = await send(agent.key, { ...turn('hi'), model: 'anthropic/claude-sonnet-4-5' });
    t.equal(beyond.statusCode, 403);
    t.equal(beyond.json().code, 'MODEL_RESTRICTED');
    t.equal((await send('ag_nope', turn('hi'))).statusCode, 401);
  },
);

t.test(
  'parts that cannot be priced before the call are refused: PDF documents, server tools billed per use',
  async (t) => {
    const agent = await agentWithKey('collective', 'anthropic');
    const before = providers.delivered.length;
    const pdf = await send(agent.key, {
      ...turn('x'),
      messages: [
        {
          role: 'user',
          content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }],
        },
      ],
    });
    t.equal(pdf.statusCode, 400);
    t.equal(pdf.json().code, 'UNPRICED_CONTENT');
    const search = await send(agent.key, {
      ...turn('x'),
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    });
    t.equal(search.json().code, 'UNPRICED_CONTENT');
    t.equal(providers.delivered.length, before, 'neither reached the provider');
  },
);

t.test(
  'the reservation bounds the dearest outcome: every prompt token a one-hour cache write, images at their worst case',
  async (t) => {
    const haiku = catalogById.get('anthropic/claude-haiku-4-5')!;
    const body = {
      ...turn('look'),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(40_000) } },
            { type: 'text', text: 'what is it?' },
          ],
        },
      ],
    };
    const reserved = messagesMaximum(haiku, body, 256);
    const withoutData = {
      ...body,
      messages: [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: 'what is it?' }] }],
    };
    const promptBound = Buffer.byteLength(JSON.stringify(withoutData)) + 1024 + haiku.maxImageTokens!;
    t.ok(
      reserved >= costOf(haiku, promptBound, 256, { write: promptBound, write1h: promptBound })!,
      'at least every prompt token written for an hour',
    );
    t.ok(reserved > costOf(haiku, promptBound, 256)!, 'more than the same prompt as plain input');
  },
);
