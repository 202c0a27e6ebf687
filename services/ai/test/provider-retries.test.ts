import t from 'tap';
import { systemDb } from '@agentyard/testing';
import type { ServiceApp } from '@agentyard/http';
import { agentHeaders, agentWithKey, backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// Backoff ceilings of a millisecond keep the run short; the policy is otherwise the default (2 retries).
const providers = await startLocalProviders(t);
const app = await build(t, { ...providers.env, PROVIDER_RETRY_BASE_MS: '1' });
const noDeadline = await build(t, { ...providers.env, PROVIDER_RETRY_BASE_MS: '1', PROVIDER_RETRY_DEADLINE_MS: '0' });

const chat = (on: ServiceApp, userId: string, stream = false) =>
  on.inject({
    method: 'POST',
    url: '/api/ai/chat',
    headers: backendHeaders({ admin: true, userId }),
    payload: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream },
  });
/** The attempts the usage rows of `userId` (or of its agent) hold, oldest first. */
async function attemptsOf(on: ServiceApp, column: 'user_id' | 'agent_id', id: string) {
  await on.usageWriter.flush();
  const rows = await systemDb()
    .selectFrom('usage_events')
    .select(['model', 'detail'])
    .where(column, '=', id)
    .orderBy('occurred_at')
    .execute();
  return rows.map((r) => ({
    model: r.model,
    attempts: r.detail?.attempts.map(({ model, status, outcome }) => ({ model, status, outcome })),
  }));
}
const failed = (model: string, status: number | null) => ({ model, status, outcome: 'failed' });
const served = (model: string) => ({ model, status: 200, outcome: 'served' });
const sent = () => providers.delivered.length;

t.beforeEach(() => {
  providers.failNext.clear();
  providers.behaviour.clear();
});

t.test(
  'a provider answering 429 twice is tried again and serves the call; every attempt is in the usage row',
  async (t) => {
    const userId = crypto.randomUUID();
    providers.failNext.set('gpt-4o-mini', { status: 429, times: 2 });
    const before = sent();
    const res = await chat(app, userId);
    t.equal(res.statusCode, 200, res.body);
    t.has(res.json(), { model: 'openai/gpt-4o-mini', provider: 'openai' });
    t.equal(sent() - before, 3, 'three requests reached the provider');
    t.same(await attemptsOf(app, 'user_id', userId), [
      {
        model: 'openai/gpt-4o-mini',
        attempts: [failed('openai/gpt-4o-mini', 429), failed('openai/gpt-4o-mini', 429), served('openai/gpt-4o-mini')],
      },
    ]);
  },
);

t.test('503 beyond the retries moves to the fallback model, streamed too', async (t) => {
  for (const stream of [false, true]) {
    const userId = crypto.randomUUID();
    providers.failNext.set('gpt-4o-mini', { status: 503, times: 3 });
    const res = await chat(app, userId, stream);
    t.equal(res.statusCode, 200, res.body);
    if (!stream) t.has(res.json(), { model: 'google/gemini-2.5-flash' });
    else t.match(res.body, /google\/gemini-2\.5-flash/);
    const unavailable = failed('openai/gpt-4o-mini', 503);
    t.same(
      await attemptsOf(app, 'user_id', userId),
      [
        {
          model: 'google/gemini-2.5-flash',
          attempts: [unavailable, unavailable, unavailable, served('google/gemini-2.5-flash')],
        },
      ],
      `stream: ${stream}`,
    );
  }
});

t.test(
  'a 429 that says Retry-After is tried again after that wait, not ours; one asking past the deadline goes to the fallback',
  async (t) => {
    const userId = crypto.randomUUID();
    providers.failNext.set('gpt-4o-mini', { status: 429, times: 1, retryAfter: '1' });
    const started = performance.now();
    const res = await chat(app, userId);
    t.equal(res.statusCode, 200, res.body);
    // Timers may fire a hair early against performance.now(); our own backoff here is at most a millisecond.
    t.ok(performance.now() - started >= 900, 'the second attempt waited the second the provider asked for');
    t.same(await attemptsOf(app, 'user_id', userId), [
      { model: 'openai/gpt-4o-mini', attempts: [failed('openai/gpt-4o-mini', 429), served('openai/gpt-4o-mini')] },
    ]);

    // Two minutes is past the retry deadline (10 s): no retry of that model, the fallback serves at once.
    const later = crypto.randomUUID();
    providers.failNext.set('gpt-4o-mini', { status: 429, times: 1, retryAfter: '120' });
    t.equal((await chat(app, later)).statusCode, 200);
    t.same(await attemptsOf(app, 'user_id', later), [
      {
        model: 'google/gemini-2.5-flash',
        attempts: [failed('openai/gpt-4o-mini', 429), served('google/gemini-2.5-flash')],
      },
    ]);
  },
);

t.test('a refusal that will not change (401) is not retried: straight to the fallback', async (t) => {
  const userId = crypto.randomUUID();
  providers.failNext.set('gpt-4o-mini', { status: 401, times: 1 });
  t.equal((await chat(app, userId)).statusCode, 200);
  t.same(await attemptsOf(app, 'user_id', userId), [
    {
      model: 'google/gemini-2.5-flash',
      attempts: [failed('openai/gpt-4o-mini', 401), served('google/gemini-2.5-flash')],
    },
  ]);
});

t.test('past the retry deadline no retry starts; the fallback is still tried', async (t) => {
  const userId = crypto.randomUUID();
  providers.failNext.set('gpt-4o-mini', { status: 429, times: 1 });
  t.equal((await chat(noDeadline, userId)).statusCode, 200);
  t.same(await attemptsOf(noDeadline, 'user_id', userId), [
    {
      model: 'google/gemini-2.5-flash',
      attempts: [failed('openai/gpt-4o-mini', 429), served('google/gemini-2.5-flash')],
    },
  ]);
});

t.test('passed-through wires are retried on their own provider', async (t) => {
  const agent = await agentWithKey('collective');
  providers.failNext.set('text-embedding-3-small', { status: 503, times: 1 });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/embeddings',
    headers: agentHeaders(agent.key),
    payload: { model: 'openai/text-embedding-3-small', input: 'hello' },
  });
  t.equal(res.statusCode, 200, res.body);
  t.same(await attemptsOf(app, 'agent_id', agent.agentId), [
    {
      model: 'openai/text-embedding-3-small',
      attempts: [failed('openai/text-embedding-3-small', 503), served('openai/text-embedding-3-small')],
    },
  ]);

  providers.failNext.set('text-embedding-3-small', { status: 429, times: 3 });
  const refused = await app.inject({
    method: 'POST',
    url: '/v1/embeddings',
    headers: agentHeaders(agent.key),
    payload: { model: 'openai/text-embedding-3-small', input: 'hello' },
  });
  t.equal(refused.statusCode, 500, 'still limited after the retries: the provider trouble is told as ours');
  t.same(refused.json(), { error: 'AI provider request failed' });
});
