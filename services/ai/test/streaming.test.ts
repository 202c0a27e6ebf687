import t from 'tap';
import { systemDb } from '@agentyard/testing';
import { backendHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);
const userId = crypto.randomUUID();

function events(body: string): unknown[] {
  return body
    .split('\n\n')
    .filter(Boolean)
    .map((block) => block.replace(/^data: /, ''))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}
const stream = (model: string) =>
  app.inject({
    method: 'POST',
    url: '/api/ai/chat',
    headers: backendHeaders({ admin: true, userId }),
    payload: { model, stream: true, messages: [{ role: 'user', content: 'hi' }] },
  });
const text = (chunks: unknown[]) =>
  chunks
    .map((c) => (c as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '')
    .join('');

for (const [model, provider, usage] of [
  ['openai/gpt-4o-mini', 'openai', { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }],
  ['anthropic/claude-sonnet-4-5', 'anthropic', { prompt_tokens: 13, completion_tokens: 9, total_tokens: 22 }],
  ['google/gemini-2.5-flash', 'gemini', { prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 }],
] as const) {
  t.test(`${provider} stream: OpenAI chunks, usage, [DONE]`, async (t) => {
    const res = await stream(model);
    t.equal(res.statusCode, 200);
    t.match(res.headers['content-type'], /^text\/event-stream/);
    const chunks = events(res.body);
    t.equal(chunks.at(-1), '[DONE]');
    t.equal(text(chunks), 'Hello from the local provider');
    t.ok(
      chunks.some((c) => (c as { choices?: { finish_reason?: string }[] }).choices?.[0]?.finish_reason === 'stop'),
      'finish reason',
    );
    t.ok(
      chunks
        .filter((c) => c !== '[DONE]')
        .every(
          (c) =>
            (c as { model: string; object: string }).model === model &&
            (c as { object: string }).object === 'chat.completion.chunk',
        ),
    );
    t.same((chunks.find((c) => (c as { usage?: unknown }).usage) as { usage: unknown }).usage, usage);
    if (provider === 'gemini')
      t.equal(providers.delivered.at(-1)!.path, '/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    if (provider === 'anthropic') t.equal(providers.delivered.at(-1)!.body.stream, true);
    if (provider === 'openai') t.same(providers.delivered.at(-1)!.body.stream_options, { include_usage: true });
  });
}

for (const [model, upstream] of [
  ['openai/gpt-4o-mini', 'gpt-4o-mini'],
  ['anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5'],
  ['google/gemini-2.5-flash', 'gemini-2.5-flash'],
] as const) {
  t.test(`${upstream} dropping mid-stream ends with an error event, not a clean close`, async (t) => {
    providers.behaviour.set(upstream, 'drop');
    t.teardown(() => providers.behaviour.clear());
    const res = await stream(model);
    const chunks = events(res.body);
    t.equal(text(chunks), 'Hello ', res.body);
    t.notOk(chunks.includes('[DONE]'));
    t.match(chunks.at(-1), { error: { message: String } });
  });
}

t.test('a stream the primary refuses falls back before the first byte', async (t) => {
  providers.behaviour.set('gpt-4o-mini', 'error');
  t.teardown(() => providers.behaviour.clear());
  const chunks = events((await stream('openai/gpt-4o-mini')).body);
  t.equal(chunks.at(-1), '[DONE]');
  t.equal((chunks[0] as { model: string }).model, 'google/gemini-2.5-flash');
});

t.test('every stream, broken ones included, left a usage row', async (t) => {
  await app.usageWriter.flush();
  const rows = await systemDb()
    .selectFrom('usage_events')
    .select(['model', 'input_tokens', 'output_tokens'])
    .where('user_id', '=', userId)
    .orderBy('occurred_at')
    .execute();
  t.equal(rows.length, 7);
  t.has(rows[0], { model: 'openai/gpt-4o-mini', input_tokens: 11, output_tokens: 7 });
  t.ok(
    rows.slice(3, 6).every((r) => r.output_tokens > 0),
    'dropped streams are costed from what was delivered',
  );
});
