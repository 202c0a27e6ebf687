import t, { type Test } from 'tap';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { PLAN_MINUTE_CAPS } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { agentHeaders, build, hostedAgentOf, noticeApplied } from './helper.ts';
import { startLocalProviders } from './providers.ts';

// Two gateway processes on one database and one Redis: limits set through one hold in both.
const providers = await startLocalProviders(t);
const first = await build(t, providers.env);
const second = await build(t, providers.env);
for (const app of [first, second]) if (!app.callerLookups.cached) await once(app.callerLookups.events, 'listening');

type Headers = Record<string, string>;
type StoredLimits = { user_id: string; requests_per_minute: number | null; tokens_per_minute: number | null };

/** What an owner limits the AI calls of, and how a test makes, calls with, reads and removes one. */
interface Subject {
  what: string;
  /** `what` with its article, for the tests' names. */
  one: string;
  idField: 'agentId' | 'keyId';
  url: string;
  /** The database's cache notice for one of them. */
  noticeTable: string;
  code: string;
  /** Whose limit a refusal names. */
  holder: string;
  unknown: string;
  /** One of the user's, and the headers the gateway sees on its calls. */
  make(userId: string): Promise<{ id: string; headers: Headers }>;
  stored(id: string): Promise<StoredLimits[]>;
  remove(id: string): Promise<unknown>;
}

const agents: Subject = {
  what: 'agent',
  one: 'an agent',
  idField: 'agentId',
  url: '/api/agents',
  noticeTable: 'agents',
  code: 'AGENT_RATE_LIMITED',
  holder: "This agent's",
  unknown: 'Agent',
  async make(userId) {
    const agent = await hostedAgentOf(userId);
    return { id: agent.agentId, headers: agentHeaders(agent.key) };
  },
  stored: (id) =>
    systemDb()
      .selectFrom('agent_minute_limits')
      .select(['user_id', 'requests_per_minute', 'tokens_per_minute'])
      .where('agent_id', '=', id)
      .execute(),
  remove: (id) => systemDb().deleteFrom('agents').where('id', '=', id).execute(),
};

const keys: Subject = {
  what: 'key',
  one: 'a key',
  idField: 'keyId',
  url: '/api/keys',
  noticeTable: 'api_keys',
  code: 'KEY_RATE_LIMITED',
  holder: "This API key's",
  unknown: 'API key',
  async make(userId) {
    const key = await systemDb()
      .insertInto('api_keys')
      .values({ user_id: userId, name: 'paced', key_hash: randomBytes(32).toString('hex'), prefix: 'sk_test' })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: key.id, headers: identityHeaders({ surface: 'web', auth: 'user-key', userId, keyId: key.id }) };
  },
  stored: (id) =>
    systemDb()
      .selectFrom('api_key_minute_limits')
      .select(['user_id', 'requests_per_minute', 'tokens_per_minute'])
      .where('key_id', '=', id)
      .execute(),
  remove: (id) => systemDb().deleteFrom('api_keys').where('id', '=', id).execute(),
};

async function owner(plan = 'collective') {
  const user = await createUserRow({ plan });
  return { ...user, web: identityHeaders({ userId: user.id, email: user.email }) };
}
const ask = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const call = (app: ServiceApp, headers: Headers, body: object = ask) =>
  app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: body });

for (const subject of [agents, keys]) {
  const limitsUrl = (id: string) => `${subject.url}/${id}/limits`;
  const putLimits = (headers: Headers, id: string, payload: object) =>
    first.inject({ method: 'PUT', url: limitsUrl(id), headers, payload });
  /** Sets limits through the first process and waits until both have heard of them. */
  async function limit(headers: Headers, id: string, payload: object) {
    const heard = Promise.all([
      noticeApplied(first, `${subject.noticeTable}:${id}`),
      noticeApplied(second, `${subject.noticeTable}:${id}`),
    ]);
    const res = await putLimits(headers, id, payload);
    await heard;
    return res;
  }
  /** Every process refuses the caller's calls, streamed or not, with 429 and Retry-After, before any reaches the provider. */
  async function refusedEverywhere(t: Test, headers: Headers, error: RegExp) {
    const before = providers.delivered.length;
    for (const app of [first, second]) {
      for (const body of [ask, { ...ask, stream: true }]) {
        const refused = await call(app, headers, body);
        t.equal(refused.statusCode, 429, refused.body);
        t.match(refused.json(), { error, code: subject.code });
        const retryAfter = Number(refused.headers['retry-after']);
        t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers['retry-after']}`);
      }
    }
    t.equal(providers.delivered.length, before, 'no refused call reached the provider');
  }

  t.test(
    `${subject.one} limited to 2 requests a minute is refused its third, in every process, while the owner's other ${subject.what} is served`,
    async (t) => {
      const user = await owner();
      const paced = await subject.make(user.id);
      const other = await subject.make(user.id);
      t.equal((await call(first, paced.headers)).statusCode, 200, 'served before any limit');

      const set = await limit(user.web, paced.id, { requestsPerMinute: 2, tokensPerMinute: null });
      t.equal(set.statusCode, 200, set.body);
      t.same(set.json(), {
        [subject.idField]: paced.id,
        requestsPerMinute: 2,
        tokensPerMinute: null,
        caps: PLAN_MINUTE_CAPS.collective,
      });

      t.equal((await call(first, paced.headers)).statusCode, 200);
      t.equal((await call(second, paced.headers)).statusCode, 200);
      await refusedEverywhere(t, paced.headers, new RegExp(`${subject.holder} limit of 2 requests per minute`));
      for (const app of [first, second])
        t.equal((await call(app, other.headers)).statusCode, 200, `the same owner’s other ${subject.what} is served`);

      const lifted = await limit(user.web, paced.id, { requestsPerMinute: null, tokensPerMinute: null });
      t.equal(lifted.statusCode, 200);
      t.equal((await call(second, paced.headers)).statusCode, 200, 'no limit: served again');
    },
  );

  t.test(
    `${subject.one}'s tokens count on the answer's real usage, in every process, on the passed-through wires too`,
    async (t) => {
      const user = await owner();
      const paced = await subject.make(user.id);
      const set = await limit(user.web, paced.id, { requestsPerMinute: null, tokensPerMinute: 10 });
      t.same(set.json(), {
        [subject.idField]: paced.id,
        requestsPerMinute: null,
        tokensPerMinute: 10,
        caps: PLAN_MINUTE_CAPS.collective,
      });
      // The local provider's answer counts 18 tokens: the call under the limit is served, and spends it.
      const served = await call(first, paced.headers);
      t.equal(served.statusCode, 200, served.body);
      await refusedEverywhere(t, paced.headers, new RegExp(`${subject.holder} limit of 10 tokens per minute`));

      const embedder = await subject.make(user.id);
      t.equal((await limit(user.web, embedder.id, { requestsPerMinute: null, tokensPerMinute: 5 })).statusCode, 200);
      const embed = () =>
        first.inject({
          method: 'POST',
          url: '/v1/embeddings',
          headers: embedder.headers,
          payload: { model: 'openai/text-embedding-3-small', input: 'x'.repeat(40) },
        });
      t.equal((await embed()).statusCode, 200);
      t.equal((await embed()).statusCode, 429, 'its 10 input tokens spent the 5 allowed');
    },
  );

  t.test(
    `${subject.one}'s limits are its owner's to read and set, within the plan's caps, and go with it`,
    async (t) => {
      const user = await owner('solo');
      const limited = await subject.make(user.id);
      const read = await first.inject({ method: 'GET', url: limitsUrl(limited.id), headers: user.web });
      t.equal(read.statusCode, 200);
      t.same(read.json(), {
        [subject.idField]: limited.id,
        requestsPerMinute: null,
        tokensPerMinute: null,
        caps: PLAN_MINUTE_CAPS.solo,
      });

      for (const field of ['requestsPerMinute', 'tokensPerMinute'] as const) {
        const cap = PLAN_MINUTE_CAPS.solo[field];
        const beyond = await putLimits(user.web, limited.id, {
          requestsPerMinute: null,
          tokensPerMinute: null,
          [field]: cap + 1,
        });
        t.equal(beyond.statusCode, 400);
        t.match(beyond.json(), { error: `${field} can be at most ${cap} on the solo plan`, code: /^BEYOND_PLAN_CAP$/ });
      }
      for (const payload of [
        { requestsPerMinute: 0, tokensPerMinute: null },
        { requestsPerMinute: 5 },
        { requestsPerMinute: 5, tokensPerMinute: null, extra: 1 },
        { requestsPerMinute: '5', tokensPerMinute: null },
        { requestsPerMinute: 1.5, tokensPerMinute: null },
      ]) {
        const bad = await putLimits(user.web, limited.id, payload);
        t.equal(bad.statusCode, 400, JSON.stringify(payload));
        t.type(bad.json().error, 'string');
      }
      const notAnId = await putLimits(user.web, 'not-a-uuid', { requestsPerMinute: 1, tokensPerMinute: null });
      t.equal(notAnId.statusCode, 400);
      t.type(notAnId.json().error, 'string');
      t.same(await subject.stored(limited.id), [], 'refused input changed nothing');

      const stranger = await owner('network');
      for (const method of ['GET', 'PUT'] as const) {
        const res = await first.inject({
          method,
          url: limitsUrl(limited.id),
          headers: stranger.web,
          ...(method === 'PUT' ? { payload: { requestsPerMinute: 1, tokensPerMinute: 1 } } : {}),
        });
        t.equal(res.statusCode, 404, `another user's ${subject.what}: ${method} 404`);
        t.match(res.json(), { error: `${subject.unknown} ${limited.id} not found` });
      }
      t.same(await subject.stored(limited.id), [], "a stranger's attempt changed nothing");
      const unpaid = await owner('free');
      t.equal(
        (await first.inject({ method: 'GET', url: limitsUrl(limited.id), headers: unpaid.web })).statusCode,
        402,
        'no plan, no caps',
      );

      t.equal(
        (await putLimits(user.web, limited.id, { requestsPerMinute: 60, tokensPerMinute: 1000 })).statusCode,
        200,
      );
      t.same(await subject.stored(limited.id), [
        { user_id: user.id, requests_per_minute: 60, tokens_per_minute: 1000 },
      ]);
      const reread = await first.inject({ method: 'GET', url: limitsUrl(limited.id), headers: user.web });
      t.same(reread.json(), {
        [subject.idField]: limited.id,
        requestsPerMinute: 60,
        tokensPerMinute: 1000,
        caps: PLAN_MINUTE_CAPS.solo,
      });

      await subject.remove(limited.id);
      t.same(await subject.stored(limited.id), [], `deleting the ${subject.what} deletes its limits`);
    },
  );
}

t.test(
  "a key's limits hold only for calls made with it: not for a caller the edge named no key for, nor the owner's session",
  async (t) => {
    const user = await owner();
    const paced = await keys.make(user.id);
    const heard = Promise.all([
      noticeApplied(first, `api_keys:${paced.id}`),
      noticeApplied(second, `api_keys:${paced.id}`),
    ]);
    t.equal(
      (
        await first.inject({
          method: 'PUT',
          url: `/api/keys/${paced.id}/limits`,
          headers: user.web,
          payload: { requestsPerMinute: 1, tokensPerMinute: null },
        })
      ).statusCode,
      200,
    );
    await heard;
    t.equal((await call(first, paced.headers)).statusCode, 200);
    t.equal((await call(second, paced.headers)).statusCode, 429, 'the key has spent its minute');

    const keyless = identityHeaders({ surface: 'web', auth: 'user-key', userId: user.id });
    t.equal(
      (await call(first, keyless)).statusCode,
      200,
      'a caller the edge named no key for is not counted against one',
    );
    const session = await first.inject({ method: 'GET', url: `/api/keys/${paced.id}/limits`, headers: user.web });
    t.equal(session.statusCode, 200, "the owner's session is not limited by its key");
  },
);
