import t from 'tap';
import { once } from 'node:events';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { PLAN_MINUTE_CAPS } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { agentHeaders, build } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// Two gateway processes on one database and one Redis: limits set through one hold in both.
const providers = await startLocalProviders(t);
const first = await build(t, providers.env);
const second = await build(t, providers.env);
for (const app of [first, second]) if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

async function agentOf(userId: string) {
  const key = `ag_${randomToken()}`;
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'paced',
      model: 'openai/gpt-4o-mini',
      tools_profile: 'messaging',
      subdomain: `m-${crypto.randomUUID().slice(0, 8)}`,
      ai_provider: 'openai',
      ai_key_hash: hashToken(key),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { key, agentId: agent.id };
}
async function owner(plan = 'collective') {
  const user = await createUserRow({ plan });
  return { ...user, web: identityHeaders({ userId: user.id, email: user.email }) };
}
/** Resolves once `app` has applied the database's notice `payload`. */
const noticed = (app: ServiceApp, payload: string) =>
  new Promise<void>((resolve) => {
    const on = (p: string) => {
      if (p !== payload) return;
      app.callerLookups.events.off('notice', on);
      resolve();
    };
    app.callerLookups.events.on('notice', on);
  });
const ask = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const call = (app: ServiceApp, key: string, body: object = ask) => app.inject({ method: 'POST', url: '/v1/chat/completions', headers: agentHeaders(key), payload: body });
const putLimits = (headers: Record<string, string>, agentId: string, payload: object) => first.inject({ method: 'PUT', url: `/api/agents/${agentId}/limits`, headers, payload });
/** Sets limits through the first process and waits until both have heard of them. */
async function limit(headers: Record<string, string>, agentId: string, payload: object) {
  const heard = Promise.all([noticed(first, `agents:${agentId}`), noticed(second, `agents:${agentId}`)]);
  const res = await putLimits(headers, agentId, payload);
  await heard;
  return res;
}

t.test("an agent's token limit refuses its next call with 429 and Retry-After, in every process, while its sibling is served", async (t) => {
  const user = await owner();
  const paced = await agentOf(user.id);
  const sibling = await agentOf(user.id);
  t.equal((await call(first, paced.key)).statusCode, 200, 'served before any limit');

  const set = await limit(user.web, paced.agentId, { requestsPerMinute: null, tokensPerMinute: 10 });
  t.equal(set.statusCode, 200, set.body);
  t.same(set.json(), { agentId: paced.agentId, requestsPerMinute: null, tokensPerMinute: 10, caps: PLAN_MINUTE_CAPS.collective });

  // The local provider's answer counts 18 tokens: the call under the limit is served, and spends it.
  const served = await call(first, paced.key);
  t.equal(served.statusCode, 200, served.body);
  const before = providers.delivered.length;
  for (const app of [first, second]) {
    for (const body of [ask, { ...ask, stream: true }]) {
      const refused = await call(app, paced.key, body);
      t.equal(refused.statusCode, 429, refused.body);
      t.match(refused.json(), { error: /limit of 10 tokens per minute/, code: 'AGENT_RATE_LIMITED' });
      const retryAfter = Number(refused.headers['retry-after']);
      t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers['retry-after']}`);
    }
  }
  t.equal(providers.delivered.length, before, 'no refused call reached the provider');

  const other = await call(second, sibling.key);
  t.equal(other.statusCode, 200, 'the same owner’s other agent is served');

  const lifted = await limit(user.web, paced.agentId, { requestsPerMinute: null, tokensPerMinute: null });
  t.equal(lifted.statusCode, 200);
  t.equal((await call(second, paced.key)).statusCode, 200, 'no limit: served again');
});

t.test('requests per minute are counted across processes, tokens on the passed-through wires too', async (t) => {
  const user = await owner();
  const agent = await agentOf(user.id);
  t.equal((await limit(user.web, agent.agentId, { requestsPerMinute: 2, tokensPerMinute: null })).statusCode, 200);
  t.equal((await call(first, agent.key)).statusCode, 200);
  t.equal((await call(second, agent.key)).statusCode, 200);
  const refused = await call(first, agent.key);
  t.equal(refused.statusCode, 429);
  t.match(refused.json(), { error: /limit of 2 requests per minute/, code: 'AGENT_RATE_LIMITED' });
  t.ok(Number(refused.headers['retry-after']) >= 1);

  const embedder = await agentOf(user.id);
  t.equal((await limit(user.web, embedder.agentId, { requestsPerMinute: null, tokensPerMinute: 5 })).statusCode, 200);
  const embed = () => first.inject({ method: 'POST', url: '/v1/embeddings', headers: agentHeaders(embedder.key), payload: { model: 'openai/text-embedding-3-small', input: 'x'.repeat(40) } });
  t.equal((await embed()).statusCode, 200);
  t.equal((await embed()).statusCode, 429, 'its 10 input tokens spent the 5 allowed');
});

t.test("limits are the owner's to read and set, within the plan's caps", async (t) => {
  const user = await owner('solo');
  const agent = await agentOf(user.id);
  const read = await first.inject({ method: 'GET', url: `/api/agents/${agent.agentId}/limits`, headers: user.web });
  t.equal(read.statusCode, 200);
  t.same(read.json(), { agentId: agent.agentId, requestsPerMinute: null, tokensPerMinute: null, caps: PLAN_MINUTE_CAPS.solo });

  const beyond = await putLimits(user.web, agent.agentId, { requestsPerMinute: PLAN_MINUTE_CAPS.solo.requestsPerMinute + 1, tokensPerMinute: null });
  t.equal(beyond.statusCode, 400);
  t.match(beyond.json(), { error: `requestsPerMinute can be at most ${PLAN_MINUTE_CAPS.solo.requestsPerMinute} on the solo plan`, code: 'BEYOND_PLAN_CAP' });
  for (const payload of [
    { requestsPerMinute: 0, tokensPerMinute: null },
    { requestsPerMinute: 5 },
    { requestsPerMinute: 5, tokensPerMinute: null, extra: 1 },
    { requestsPerMinute: 1.5, tokensPerMinute: null },
  ]) {
    const bad = await putLimits(user.web, agent.agentId, payload);
    t.equal(bad.statusCode, 400, JSON.stringify(payload));
    t.type(bad.json().error, 'string');
  }
  const rows = await systemDb().selectFrom('agent_minute_limits').selectAll().where('agent_id', '=', agent.agentId).execute();
  t.same(rows, [], 'refused input changed nothing');

  const stranger = await owner('network');
  for (const method of ['GET', 'PUT'] as const) {
    const res = await first.inject({
      method,
      url: `/api/agents/${agent.agentId}/limits`,
      headers: stranger.web,
      ...(method === 'PUT' ? { payload: { requestsPerMinute: 1, tokensPerMinute: 1 } } : {}),
    });
    t.equal(res.statusCode, 404, `another user's agent: ${method} 404`);
  }
  const unpaid = await owner('free');
  t.equal((await first.inject({ method: 'GET', url: `/api/agents/${agent.agentId}/limits`, headers: unpaid.web })).statusCode, 402, 'no plan, no caps');

  t.equal((await putLimits(user.web, agent.agentId, { requestsPerMinute: 60, tokensPerMinute: 1000 })).statusCode, 200);
  const stored = await systemDb().selectFrom('agent_minute_limits').select(['user_id', 'requests_per_minute', 'tokens_per_minute']).where('agent_id', '=', agent.agentId).executeTakeFirstOrThrow();
  t.same(stored, { user_id: user.id, requests_per_minute: 60, tokens_per_minute: 1000 });
});
