import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityHeaders, systemDb } from '@agentyard/testing';
import { backend, startAgents, web } from '../agents-harness.ts';

// Plan limits on skills (solo 3, collective 10, label 25, network 100): a configuration
// installs at most its owner's plan's number of skills, wherever it is saved, restored or given to
// a new agent; the plan is the active subscription's, else the user's; admins get network's.

const skills = (n: number, off = 0) => ({
  skills: {
    entries: Object.fromEntries(Array.from({ length: n + off }, (_, i) => [`skill-${i}`, { enabled: i >= off }])),
  },
});
const overLimit = (limit: number) => ({ error: `Skill limit reached for your plan (${limit})`, code: 'SKILL_LIMIT' });

t.test('skill limits by plan on every path a configuration takes', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-skill-limits-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_PORT_RANGE: '38000-38099',
  });
  const { app } = h;
  const user = await h.subscribedUser('solo');
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'Skilled',
      status: 'running',
      plan: 'solo',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `s-${randomUUID().slice(0, 8)}`,
      updated_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const configOf = async () =>
    (await systemDb().selectFrom('agents').select('config').where('id', '=', agent.id).executeTakeFirstOrThrow())
      .config;
  const putAgentConfig = (config: object, headers = web(user)) =>
    app.inject({ method: 'PUT', url: `/api/agents/${agent.id}/config`, headers, payload: { config } });

  await t.test("an agent's configuration: up to the plan's number, switched-off entries not counted", async (t) => {
    t.equal((await putAgentConfig(skills(3))).statusCode, 200, 'solo: 3');
    t.equal((await putAgentConfig(skills(3, 5))).statusCode, 200, '3 on and 5 off');
    const refused = await putAgentConfig(skills(4));
    t.equal(refused.statusCode, 429);
    t.same(refused.json(), overLimit(3));
    t.same(await configOf(), skills(3, 5), 'nothing changed');
    const backendPut = await app.inject({
      method: 'PUT',
      url: `/api/agents/${agent.id}`,
      headers: backend(user),
      payload: { config: skills(4) },
    });
    t.equal(backendPut.statusCode, 429, 'the backend PUT too');
    t.same(backendPut.json(), overLimit(3));
    t.same(await configOf(), skills(3, 5), 'nothing changed');
  });

  await t.test("the plan is the active subscription's; admins get network's", async (t) => {
    const upgraded = `sub_${randomUUID()}`;
    await systemDb()
      .insertInto('subscriptions')
      .values({
        id: upgraded,
        user_id: user.id,
        status: 'active',
        plan: 'label',
        updated_at: new Date(Date.now() + 1000),
      })
      .execute();
    t.equal((await putAgentConfig(skills(25))).statusCode, 200, 'label: 25');
    t.same((await putAgentConfig(skills(26))).json(), overLimit(25));
    await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', '=', upgraded).execute();
    t.same((await putAgentConfig(skills(4))).json(), overLimit(3), 'canceled: the solo subscription again');
    const admin = identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email, admin: true });
    t.equal((await putAgentConfig(skills(100), admin)).statusCode, 200, 'admin: 100');
    t.same((await putAgentConfig(skills(101), admin)).json(), overLimit(100));
  });

  await t.test('/api/config: a save over the limit is refused without a backup; a restore too', async (t) => {
    const save = (config: object) =>
      app.inject({ method: 'POST', url: '/api/config', headers: web(user), payload: { config } });
    const backups = async () =>
      (await systemDb().selectFrom('config_backups').select('id').where('user_id', '=', user.id).execute()).length;
    const before = await backups();
    const refused = await save(skills(4));
    t.equal(refused.statusCode, 429);
    t.same(refused.json(), overLimit(3));
    t.equal(await backups(), before, 'no backup made');
    // A configuration saved on a bigger plan, then the plan shrinks: restoring it is over the limit.
    const bigger = `sub_${randomUUID()}`;
    await systemDb()
      .insertInto('subscriptions')
      .values({
        id: bigger,
        user_id: user.id,
        status: 'active',
        plan: 'collective',
        updated_at: new Date(Date.now() + 2000),
      })
      .execute();
    t.equal((await save(skills(10))).statusCode, 200, 'collective: 10');
    // The next save backs the 10 skills up.
    const { backupId } = (await save(skills(1))).json();
    await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('id', '=', bigger).execute();
    const restore = await app.inject({ method: 'PUT', url: '/api/config', headers: web(user), payload: { backupId } });
    t.equal(restore.statusCode, 429, restore.body);
    t.same(restore.json(), overLimit(3));
    t.same(
      (await app.inject({ method: 'GET', url: '/api/config', headers: web(user) })).json().config,
      skills(1),
      'the configuration stays',
    );
  });

  await t.test("a new agent's configuration: refused over the limit, no agent recorded", async (t) => {
    const count = async () =>
      (await systemDb().selectFrom('agents').select('id').where('user_id', '=', user.id).execute()).length;
    const before = await count();
    const res = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'Too skilled', config: skills(4) },
    });
    t.equal(res.statusCode, 429);
    t.same(res.json(), overLimit(3));
    t.equal(await count(), before);
  });
});
