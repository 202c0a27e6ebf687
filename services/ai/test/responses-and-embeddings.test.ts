import t from 'tap';
import { identityHeaders, systemDb } from '@agentyard/testing';
import { catalogById, EMBEDDING_MODELS } from '../src/domain/model-catalog.ts';
import { costOf } from '../src/domain/prices.ts';
import { embeddingsWire, responsesWire } from '../src/domain/responses-wire.ts';
import { agentWithKey, agentHeaders as headers, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);

const call = (url: string, key: string, body: object) =>
  app.inject({ method: 'POST', url, headers: headers(key), payload: body });
const rowsOf = async (agentId: string) => {
  await app.usageWriter.flush();
  return systemDb()
    .selectFrom('usage_events')
    .select(['model', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cost_usd'])
    .where('agent_id', '=', agentId)
    .orderBy('occurred_at')
    .execute();
};
const INSTRUCTIONS = 'Answer about capitals, briefly and exactly. '.repeat(120);

t.test(
  'Responses: plain then streamed; stateless at the provider; cached input is recorded and priced lower',
  async (t) => {
    const agent = await agentWithKey('solo');
    const first = await call('/v1/responses', agent.key, {
      model: 'openai/gpt-4o-mini',
      instructions: INSTRUCTIONS,
      input: 'France?',
    });
    t.equal(first.statusCode, 200, first.body);
    t.match(first.json(), {
      object: /^response$/,
      status: /^completed$/,
      output: [{ type: /^message$/, content: [{ type: /^output_text$/, text: 'Hello from the local provider' }] }],
    });
    const delivered = providers.delivered.at(-1)!;
    t.equal(delivered.path, '/openai/v1/responses');
    t.equal(delivered.body.model, 'gpt-4o-mini');
    t.equal(delivered.body.store, false, 'nothing kept at the provider under the platform key');
    t.equal(delivered.body.max_output_tokens, 4096, "bounded to the service's default when the caller named none");
    t.equal(delivered.headers.authorization, 'Bearer test-openai-key');

    const streamed = await call('/v1/responses', agent.key, {
      model: 'gpt-4o-mini',
      instructions: INSTRUCTIONS,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Italy?' }] }],
      stream: true,
    });
    t.equal(streamed.statusCode, 200, streamed.body);
    t.match(streamed.body, /event: response\.output_text\.delta\ndata: /);
    t.match(streamed.body, /event: response\.completed/);

    const [plain, cached] = await rowsOf(agent.agentId);
    t.equal(Number(plain!.cache_read_tokens), 0);
    t.ok(Number(cached!.cache_read_tokens) > 0, 'the second read the cache');
    t.ok(Number(cached!.cost_usd) < Number(plain!.cost_usd), `cached $${cached!.cost_usd} < first $${plain!.cost_usd}`);
  },
);

t.test(
  'Responses: state, server tools and files that cannot be priced are refused; other models are named',
  async (t) => {
    const agent = await agentWithKey('solo');
    const before = providers.delivered.length;
    for (const extra of [
      { previous_response_id: 'resp_someone_elses' },
      { tools: [{ type: 'web_search' }] },
      { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] },
      { input: [{ type: 'item_reference', id: 'msg_1' }] },
    ]) {
      const res = await call('/v1/responses', agent.key, { model: 'openai/gpt-4o-mini', input: 'hi', ...extra });
      t.equal(res.statusCode, 400, JSON.stringify(extra));
      t.equal(res.json().code, 'UNPRICED_CONTENT');
    }
    t.equal(providers.delivered.length, before, 'none reached the provider');
    const other = await call('/v1/responses', agent.key, { model: 'google/gemini-2.5-flash', input: 'hi' });
    t.equal(other.json().code, 'MODEL_NOT_ON_WIRE');
    t.same(other.json().supportedModels, ['openai/gpt-4o-mini']);
  },
);

t.test(
  'Responses: the reservation bounds every prompt byte, images at the worst case, and the output bound',
  async (t) => {
    const mini = catalogById.get('openai/gpt-4o-mini')!;
    const body = {
      model: 'x',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_image', image_url: `data:image/png;base64,${'A'.repeat(10_000)}` },
            { type: 'input_text', text: 'what?' },
          ],
        },
      ],
      max_output_tokens: 100,
    };
    const { sent, maximumUsd } = responsesWire(4096).prepare(mini, body);
    const stripped = {
      ...sent,
      input: [{ role: 'user', content: [{ type: 'input_image' }, { type: 'input_text', text: 'what?' }] }],
    };
    t.ok(maximumUsd >= costOf(mini, Buffer.byteLength(JSON.stringify(stripped)) + mini.maxImageTokens!, 100)!);
    t.equal(sent.max_output_tokens, 100);
  },
);

t.test(
  'embeddings: every paid plan has them, priced and recorded; a chat model is not an embedding model',
  async (t) => {
    const agent = await agentWithKey('solo');
    const res = await call('/v1/embeddings', agent.key, {
      model: 'text-embedding-3-small',
      input: ['one text', 'another'],
    });
    t.equal(res.statusCode, 200, res.body);
    t.has(res.json(), {
      object: 'list',
      data: [{ object: 'embedding', index: 0 }, { index: 1 }],
      usage: { prompt_tokens: 4 },
    });
    t.equal(providers.delivered.at(-1)!.path, '/openai/v1/embeddings');
    const [row] = await rowsOf(agent.agentId);
    t.equal(row!.model, 'openai/text-embedding-3-small');
    t.equal(row!.input_tokens, 4);
    t.ok(Number(row!.cost_usd) > 0);
    const chat = await call('/v1/embeddings', agent.key, { model: 'openai/gpt-4o-mini', input: 'x' });
    t.equal(chat.json().code, 'MODEL_NOT_ON_WIRE');
    const small = EMBEDDING_MODELS[0]!;
    t.ok(
      embeddingsWire.prepare(small, { input: 'héllo' }).maximumUsd >= costOf(small, 6, 0)!,
      'bounded by the UTF-8 bytes',
    );
    const unpaid = await agentWithKey('free');
    t.equal(
      (await call('/v1/embeddings', unpaid.key, { model: 'openai/text-embedding-3-small', input: 'x' })).statusCode,
      402,
    );
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/embeddings',
          headers: identityHeaders({ surface: 'backend' }),
          payload: { model: 'x', input: 'x' },
        })
      ).statusCode,
      401,
    );
  },
);
