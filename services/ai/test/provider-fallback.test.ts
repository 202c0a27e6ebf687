import t from 'tap';
import { systemDb } from '@agentyard/testing';
import { registry } from '@agentyard/observability';
import { backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
// Fallback alone: retries on the same model are provider-retries.test.ts'.
const app = await build(t, { ...providers.env, PROVIDER_TIMEOUT_MS: '300', PROVIDER_RETRIES: '0' });
const userId = crypto.randomUUID();
const chat = (model: string) =>
  app.inject({
    method: 'POST',
    url: '/api/ai/chat',
    headers: backendHeaders({ admin: true, userId }),
    payload: { model, messages: [{ role: 'user', content: 'hi' }] },
  });

for (const failure of ['error', 'hang', 'malformed'] as const) {
  t.test(`primary ${failure}: retried once on the provider's fallback, which the answer names`, async (t) => {
    providers.behaviour.clear();
    providers.behaviour.set('gpt-4o-mini', failure);
    const before = providers.delivered.length;
    const res = await chat('openai/gpt-4o-mini');
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json(), {
      model: /^google\/gemini-2\.5-flash$/,
      provider: /^gemini$/,
      message: { content: 'Hello from the local provider' },
    });
    t.same(
      providers.delivered.slice(before).map((d) => d.path),
      ['/openai/v1/chat/completions', '/gemini/v1beta/models/gemini-2.5-flash:generateContent'],
    );
  });
}

t.test('Anthropic malformed body falls back to openai', async (t) => {
  providers.behaviour.clear();
  providers.behaviour.set('claude-sonnet-4-5', 'malformed');
  const res = await chat('anthropic/claude-sonnet-4-5');
  t.equal(res.statusCode, 200);
  t.has(res.json(), { model: 'openai/gpt-4o-mini', provider: 'openai' });
});

t.test('primary and fallback both failing answer 500 without internals; only the fallback is tried once', async (t) => {
  providers.behaviour.clear();
  providers.behaviour.set('gpt-4o-mini', 'error');
  providers.behaviour.set('gemini-2.5-flash', 'error');
  const before = providers.delivered.length;
  const res = await chat('openai/gpt-4o-mini');
  t.equal(res.statusCode, 500);
  t.same(res.json(), { error: 'AI provider request failed' });
  t.equal(providers.delivered.length - before, 2);
  providers.behaviour.clear();
});

t.test(
  'usage is recorded against the model that served; the call both failed against the model asked for',
  async (t) => {
    await app.usageWriter.flush();
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['model', 'provider', 'outcome'])
      .where('user_id', '=', userId)
      .execute();
    const served = rows.filter((r) => r.outcome === 'served');
    t.equal(served.length, 4);
    t.ok(served.every((r) => r.model !== 'openai/gpt-4o-mini' || r.provider === 'openai'));
    t.equal(served.filter((r) => r.model === 'google/gemini-2.5-flash').length, 3);
    t.same(
      rows.filter((r) => r.outcome === 'failed'),
      [{ model: 'openai/gpt-4o-mini', provider: 'openai', outcome: 'failed' }],
    );
  },
);

t.test(
  "metrics: fallbacks, provider errors, tokens, cost and the gateway's own time, by provider and model",
  async (t) => {
    const value = async (name: string, labels: Record<string, string>) => {
      // A histogram's samples are read by their own names (`…_count`) among the histogram's values.
      const metric = await (
        registry.getSingleMetric(name) ?? registry.getSingleMetric(name.replace(/_count$/, ''))
      )?.get();
      return metric?.values.find(
        (v) =>
          ((v as { metricName?: string }).metricName ?? name) === name &&
          Object.entries(labels).every(([k, l]) => v.labels[k] === l),
      )?.value;
    };
    t.equal(
      await value('ai_gateway_fallbacks_total', { from: 'openai', to: 'gemini' }),
      4,
      'three recovered, one failing twice',
    );
    t.equal(await value('ai_gateway_fallbacks_total', { from: 'anthropic', to: 'openai' }), 1);
    t.equal(await value('ai_gateway_provider_errors_total', { provider: 'openai' }), 4);
    t.equal(await value('ai_gateway_provider_errors_total', { provider: 'gemini' }), 1);
    t.ok(
      (await value('ai_gateway_tokens_total', {
        provider: 'gemini',
        model: 'google/gemini-2.5-flash',
        kind: 'input',
      }))! > 0,
    );
    t.ok((await value('ai_gateway_cost_usd_total', { provider: 'gemini', model: 'google/gemini-2.5-flash' }))! > 0);
    t.equal(
      await value('ai_gateway_overhead_seconds_count', { provider: 'openai' }),
      4,
      'one per request, at its first provider call',
    );
    t.equal(await value('usage_writer_buffer_depth', {}), 0, 'flushed above');
  },
);
