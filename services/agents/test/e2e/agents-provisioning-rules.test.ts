import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { createQueues, QUEUES } from '@agentyard/queue';
import { createUserRow, systemDb } from '@agentyard/testing';
import { provisionJobId } from '../../src/domain/runtime/provisioning.ts';
import { backend, startAgents, web } from '../agents-harness.ts';
import { build } from '../helper.ts';

// Who may provision and how many: subscription, plan limits counted atomically, admin bypass, the
// kill switch, names. No worker runs here (but in the last test): the rules are decided before any container exists.
const own = () => ({
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-rules${randomBytes(3).toString('hex')}`,
  RUNTIME_DRIVER: 'process',
});

async function subscribe(userId: string, plan: string, status = 'active') {
  await systemDb()
    .insertInto('subscriptions')
    .values({ id: `sub_${randomBytes(8).toString('hex')}`, user_id: userId, status, plan })
    .execute();
}
const agentCount = async (userId: string) =>
  Number(
    (
      await systemDb()
        .selectFrom('agents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow()
    ).n,
  );

t.test('no active subscription: 403 Active subscription required, nothing created', async (t) => {
  const app = await build(t, own());
  const user = await createUserRow();
  await subscribe(user.id, 'solo', 'canceled');
  const res = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(user),
    payload: { name: 'A' },
  });
  t.equal(res.statusCode, 403);
  t.equal(res.json().error, 'Active subscription required');
  t.equal(await agentCount(user.id), 0);
});

t.test('admins (by session email) skip the subscription requirement', async (t) => {
  const app = await build(t, own());
  const user = await createUserRow();
  const { identityHeaders } = await import('@agentyard/testing');
  const res = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    payload: { name: 'Boss' },
    headers: identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email, admin: true }),
  });
  t.equal(res.statusCode, 201);
  t.equal(res.json().agent.status, 'provisioning');
});

t.test("concurrent requests cannot exceed the plan's agent limit (collective: 3)", async (t) => {
  const app = await build(t, own());
  const user = await createUserRow();
  await subscribe(user.id, 'collective');
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      app.inject({ method: 'POST', url: '/api/agents/provision', headers: web(user), payload: { name: `agent ${i}` } }),
    ),
  );
  t.same(answers.map((r) => r.statusCode).sort(), [201, 201, 201, 429, 429, 429, 429, 429]);
  t.match(answers.find((r) => r.statusCode === 429)!.json(), { error: String });
  t.equal(await agentCount(user.id), 3);
});

t.test('the kill switch answers 503 and creates nothing', async (t) => {
  const app = await build(t, { ...own(), PROVISIONING_ENABLED: 'false' });
  const user = await createUserRow();
  await subscribe(user.id, 'label');
  const res = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(user),
    payload: { name: 'A' },
  });
  t.equal(res.statusCode, 503);
  t.equal(await agentCount(user.id), 0);
});

t.test('names are 1 to 64 characters after trimming; a tier lowers the plan and its tool profile', async (t) => {
  const app = await build(t, own());
  const user = await createUserRow();
  await subscribe(user.id, 'network');
  const unknownKey = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(user),
    payload: { name: 'A', config: { gateway: { auth: { mode: 'token' } }, nonsense: true } },
  });
  t.equal(unknownKey.statusCode, 400, 'a config OpenClaw would refuse is refused before anything is created');
  t.match(unknownKey.json(), { error: /nonsense/ });
  t.equal(await agentCount(user.id), 0);
  for (const name of ['   ', 'x'.repeat(65)]) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name },
    });
    t.equal(res.statusCode, 400, JSON.stringify(name));
  }
  const solo = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(user),
    payload: { name: ' Solo ', tier: 'starter', model: 'gpt-4' },
  });
  t.equal(solo.statusCode, 201);
  const row = await systemDb()
    .selectFrom('agents')
    .selectAll()
    .where('id', '=', solo.json().agent.id)
    .executeTakeFirstOrThrow();
  t.has(row, {
    name: 'Solo',
    plan: 'solo',
    tools_profile: 'messaging',
    ai_provider: 'openrouter',
    model: 'gpt-4',
    status: 'provisioning',
  });
  const none = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(user),
    payload: { name: 'Network' },
  });
  t.has(
    await systemDb().selectFrom('agents').selectAll().where('id', '=', none.json().agent.id).executeTakeFirstOrThrow(),
    { plan: 'network', tools_profile: 'coding' },
    "no tier: the user's own plan",
  );

  const renamed = await app.inject({
    method: 'PATCH',
    url: `/api/agents/${row.id}`,
    headers: web(user),
    payload: { name: '  New name ' },
  });
  t.equal(renamed.statusCode, 200);
  t.match(renamed.json(), { success: true, agent: { id: row.id, name: 'New name' } });
  const tooLong = await app.inject({
    method: 'PATCH',
    url: `/api/agents/${row.id}`,
    headers: web(user),
    payload: { name: 'y'.repeat(65) },
  });
  t.equal(tooLong.statusCode, 400);

  const list = await app.inject({ method: 'GET', url: '/api/agents', headers: web(user) });
  t.equal(list.json().count, 2);
  const anonymous = await app.inject({
    method: 'GET',
    url: '/api/agents',
    headers: (await import('@agentyard/testing')).identityHeaders(),
  });
  t.same(anonymous.json(), { agents: [], count: 0, status: 'ok' }, 'empty without a session');
  const flat = await app.inject({ method: 'GET', url: '/api/agents', headers: backend(user) });
  t.equal(flat.json().length, 2, 'backend: a flat array');
  t.same(Object.keys(flat.json()[0]).sort(), ['created', 'id', 'status', 'subdomain', 'url']);
});

t.test('backend create: 201 pending with the create shape; clone answers 501', async (t) => {
  const app = await build(t, own());
  const user = await createUserRow();
  const res = await app.inject({
    method: 'POST',
    url: '/api/agents',
    headers: backend(user),
    payload: { name: 'Built', config: { plan: 'solo' } },
  });
  t.equal(res.statusCode, 201);
  t.same(Object.keys(res.json()).sort(), ['agentId', 'createdAt', 'id', 'name', 'status', 'subdomain', 'url']);
  t.equal(res.json().status, 'pending');
  const id = res.json().id;
  const badConfig = await app.inject({
    method: 'PUT',
    url: `/api/agents/${id}`,
    headers: backend(user),
    payload: { plan: 'network', config: { gateway: { port: 1 } } },
  });
  t.equal(badConfig.statusCode, 400, 'platform-managed keys are refused');
  t.equal(
    (await systemDb().selectFrom('agents').select('plan').where('id', '=', id).executeTakeFirstOrThrow()).plan,
    'solo',
    'and nothing changed',
  );
  const put = await app.inject({
    method: 'PUT',
    url: `/api/agents/${id}`,
    headers: backend(user),
    payload: { plan: 'network', aiProvider: 'groq' },
  });
  t.match(put.json(), { id, plan: /^network$/, aiProvider: /^groq$/, status: /^pending$/, message: String });
  t.equal(
    (await systemDb().selectFrom('agents').select('tools_profile').where('id', '=', id).executeTakeFirstOrThrow())
      .tools_profile,
    'messaging',
    'the tools profile stays as created',
  );
  for (const [plan, profile] of [
    ['scale', 'coding'],
    ['pro', 'coding'],
    ['enterprise', 'coding'],
    ['starter', 'messaging'],
    ['free', 'messaging'],
  ]) {
    const legacy = await app.inject({
      method: 'POST',
      url: '/api/agents',
      headers: backend(user),
      payload: { name: `On ${plan}`, config: { plan } },
    });
    const row = await systemDb()
      .selectFrom('agents')
      .select('tools_profile')
      .where('id', '=', legacy.json().id)
      .executeTakeFirstOrThrow();
    t.equal(row.tools_profile, profile, `plan ${plan}: the ${profile} profile, as /api/config's defaults show it`);
  }
  const noUser = await app.inject({
    method: 'POST',
    url: '/api/agents',
    headers: backend(),
    payload: { name: 'Nobody' },
  });
  t.equal(noUser.statusCode, 401);
  const clone = await app.inject({
    method: 'POST',
    url: '/api/agents/clone',
    headers: web(user),
    payload: { any: 'thing' },
  });
  t.equal(clone.statusCode, 501);
  t.match(clone.json(), { error: String });
});

t.test(
  "backend create queues the agent's provisioning (its id only); with the kill switch on it stays pending, unqueued",
  async (t) => {
    const user = await createUserRow();
    for (const enabled of [true, false]) {
      const env = { ...own(), PROVISIONING_ENABLED: String(enabled) };
      const app = await build(t, env);
      const queues = createQueues({
        redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        prefix: env.QUEUE_PREFIX,
      });
      t.teardown(() => queues.close());
      const res = await app.inject({
        method: 'POST',
        url: '/api/agents',
        headers: { ...backend(user), 'x-request-id': `queued-${enabled}-request` },
        payload: { name: `Queued ${enabled}` },
      });
      t.equal(res.statusCode, 201);
      t.equal(res.json().status, 'pending');
      const job = await queues.get(QUEUES.provisioning).getJob(provisionJobId(res.json().id));
      if (enabled)
        t.same(
          job?.data,
          { agentId: res.json().id, queuedBy: `queued-${enabled}-request` },
          'one provisioning job holding no secret: the agent and the request that queued it',
        );
      else t.equal(job, undefined, 'kill switch: no job');
    }
  },
);

t.test('backend create: pending, then provisioned by its job', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-backend-create-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs'),
    AGENT_PORT_RANGE: '38100-38199',
    AGENT_READY_TIMEOUT_MS: '30000',
  });
  // Its owner's plan covers it (an agent of a user without one is refused at deployment: plan-enforcement.test.ts).
  const user = await createUserRow({ plan: 'solo' });
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/agents',
    headers: backend(user),
    payload: { name: 'Built and run', config: { plan: 'solo' } },
  });
  t.equal(res.json().status, 'pending');
  t.match(await h.provisioned(res.json().id), /^running/);
  const row = (await h.agentRow(res.json().id))!;
  t.equal(row.status, 'running');
  t.ok(await h.runtime.waitUntilReady(row.gateway_url!), 'its gateway answers');
});
