import t from 'tap';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

const providers = await startLocalProviders(t);
const app = await build(t, providers.env);

// What the edge signs for a web caller holding a user API key (`Authorization: Bearer sk_…`).
const userKey = (userId: string) => identityHeaders({ surface: 'web', auth: 'user-key', userId });
const post = (url: string, headers: Record<string, string>, payload: object) =>
  app.inject({ method: 'POST', url, headers, payload });

t.test("a user's API key calls every /v1 wire under the user's plan, billed to the user with no agent", async (t) => {
  const user = await createUserRow({ plan: 'collective' });
  const headers = userKey(user.id);
  const models = await app.inject({ method: 'GET', url: '/v1/models', headers });
  t.equal(models.json().data.length, 5, "collective's models");
  const chat = await post('/v1/chat/completions', headers, {
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(chat.statusCode, 200, chat.body);
  const messages = await post('/v1/messages', headers, {
    model: 'claude-haiku-4-5',
    max_tokens: 50,
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(messages.statusCode, 200, messages.body);
  const responses = await post('/v1/responses', headers, { model: 'gpt-4o-mini', input: 'hi' });
  t.equal(responses.statusCode, 200, responses.body);
  const embeddings = await post('/v1/embeddings', headers, { model: 'text-embedding-3-small', input: 'hi' });
  t.equal(embeddings.statusCode, 200, embeddings.body);
  const beyond = await post('/v1/chat/completions', headers, {
    model: 'anthropic/claude-opus-4-1',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.equal(beyond.json().code, 'MODEL_RESTRICTED', 'and nothing beyond the plan');

  await app.usageWriter.flush();
  const rows = await systemDb()
    .selectFrom('usage_events')
    .select(['user_id', 'agent_id', 'model'])
    .where('user_ref', '=', user.id)
    .execute();
  t.equal(rows.length, 4);
  t.ok(rows.every((r) => r.user_id === user.id && r.agent_id === null));
});

t.test('a session, no key, or a user without a subscription do not pass', async (t) => {
  const user = await createUserRow({ plan: 'solo' });
  const body = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
  const session = await post('/v1/chat/completions', identityHeaders({ surface: 'web', userId: user.id }), body);
  t.equal(session.statusCode, 401, 'a session cookie is not an API key');
  t.equal((await post('/v1/chat/completions', identityHeaders({ surface: 'web' }), body)).statusCode, 401);
  // On the web surface an agent's key is not a user's: the edge passes no Authorization there, and the service reads none.
  const free = await createUserRow({ plan: 'free' });
  const unpaid = await post('/v1/chat/completions', userKey(free.id), body);
  t.equal(unpaid.statusCode, 402);
  t.equal(unpaid.json().code, 'SUBSCRIPTION_REQUIRED');
});
