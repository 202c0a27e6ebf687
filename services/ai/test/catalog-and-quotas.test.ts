import t from 'tap';
import { calcPrice } from '@pydantic/genai-prices';
import { createUserRow, systemDb } from '@agentyard/testing';
import { MODEL_CATALOG } from '../src/domain/model-catalog.ts';
import { costOf, priceOf } from '../src/domain/prices.ts';
import { activeSubscriptionRow, backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);

t.test('every catalog model has a price (maintained list or our override)', async (t) => {
  for (const model of MODEL_CATALOG) t.ok(priceOf(model), model.id);
});

t.test("a call's cost is the maintained list's figure exactly, long prompts (tiers) included", async (t) => {
  for (const model of MODEL_CATALOG.filter((m) => !m.price)) {
    for (const [input, output] of [
      [12, 3],
      [1000, 1000],
      [150_000, 2000],
      [300_000, 8000],
    ] as const) {
      const expected = calcPrice({ input_tokens: input, output_tokens: output }, model.upstream, {
        providerId: model.priceProvider ?? model.provider,
      })?.total_price;
      t.equal(costOf(model, input, output), expected, `${model.id} ${input}/${output}`);
    }
  }
});

t.test('models, provider models, select, estimate-cost, health', async (t) => {
  const app = await build(t, { ...providers.env, GROQ_API_KEY: '' });
  const admin = backendHeaders({ admin: true });
  const models = (await app.inject({ method: 'GET', url: '/api/ai/models', headers: admin })).json();
  t.equal(models.count, MODEL_CATALOG.length);
  t.equal(models.openrouter, true);
  t.has(
    models.models.find((m: { id: string }) => m.id === 'openai/gpt-4o-mini'),
    { provider: 'openai', inputCost: 0.15, outputCost: 0.6, contextWindow: 128000, available: true },
  );
  t.equal(
    models.models.find((m: { id: string }) => m.id === 'meta-llama/llama-3.3-70b-versatile').available,
    false,
    'no groq key',
  );

  const anthropic = (await app.inject({ method: 'GET', url: '/api/ai/models/anthropic', headers: admin })).json();
  t.equal(anthropic.count, 3);
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/ai/models/minimax', headers: admin })).statusCode,
    404,
    'minimax is outside the chain',
  );

  const sub = await activeSubscriptionRow(null, 'solo');
  const select = await app.inject({
    method: 'POST',
    url: '/api/ai/models/select',
    headers: backendHeaders({ plan: 'solo', subscription: sub }),
    payload: { taskType: 'vision' },
  });
  t.has(select.json(), { model: { id: 'google/gemini-2.5-flash', provider: 'gemini' }, taskType: 'vision' });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/ai/models/select',
        headers: backendHeaders({ plan: 'solo' }),
        payload: {},
      })
    ).statusCode,
    402,
  );

  const estimate = await app.inject({
    method: 'POST',
    url: '/api/ai/estimate-cost',
    headers: admin,
    payload: { model: 'openai/gpt-4o-mini', prompt: 'x'.repeat(4000), max_tokens: 1000 },
  });
  t.has(estimate.json(), {
    model: 'openai/gpt-4o-mini',
    inputTokens: 1000,
    outputTokens: 1000,
    estimatedCost: 0.00075,
    currency: 'USD',
  });

  t.has((await app.inject({ method: 'GET', url: '/api/ai/health', headers: admin })).json(), {
    status: 'healthy',
    providers: { openrouter: true },
  });
  t.equal(providers.delivered.length, 0, 'the health check does not chat');
  providers.behaviour.set('health', 'error');
  t.has((await app.inject({ method: 'GET', url: '/api/ai/health', headers: admin })).json(), {
    status: 'degraded',
    providers: { openrouter: false },
  });
  providers.behaviour.clear();
  const unconfigured = await build(t, { OPENROUTER_API_KEY: '' });
  const res = await unconfigured.inject({ method: 'GET', url: '/api/ai/health', headers: admin });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { status: /^error$/, error: String });
});

t.test('monthly token quotas: 429 QUOTA_EXCEEDED once enforced and used up', async (t) => {
  const user = await createUserRow({ plan: 'solo' });
  const sub = await activeSubscriptionRow(user.id, 'solo');
  const headers = backendHeaders({ userId: user.id, plan: 'solo', subscription: sub });
  const payload = { messages: [{ role: 'user', content: 'hi' }] };
  await systemDb()
    .insertInto('usage_daily')
    .values({
      day: new Date().toISOString().slice(0, 10),
      user_ref: user.id,
      user_id: user.id,
      agent_id: '',
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      calls: 1,
      unpriced_calls: 0,
      input_tokens: 1_000_000,
      output_tokens: 1_000_000,
      total_tokens: 2_000_000,
      cost_usd: '0.75',
      turns: 1,
    })
    .execute();
  const counting = await build(t, providers.env);
  t.equal(
    (await counting.inject({ method: 'POST', url: '/api/ai/chat', headers, payload })).statusCode,
    200,
    'counted, not enforced by default',
  );
  const enforcing = await build(t, { ...providers.env, QUOTAS_ENFORCED: 'true' });
  const res = await enforcing.inject({ method: 'POST', url: '/api/ai/chat', headers, payload });
  t.equal(res.statusCode, 429);
  t.match(res.json(), { code: /^QUOTA_EXCEEDED$/, error: String });
});
