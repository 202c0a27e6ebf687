import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { identityHeaders, privateDatabase } from '@agentyard/testing';
import { buildApp } from '../src/app.ts';
import { loadAgentsConfig } from '../src/config.ts';

// Caps no plan limit gives: the platform's capacity across every user (503 PLATFORM_AT_CAPACITY)
// and, for plans without an agent limit, one user's memory and CPUs together (429
// AGENT_RESOURCES_LIMIT). A database of this file's own: the platform's count is over every user.
async function platform(t: Test, env: Record<string, string>) {
  const db = await privateDatabase(t);
  const config = loadAgentsConfig({
    ...process.env,
    ...db.urls,
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-cap${randomBytes(3).toString('hex')}`,
    RUNTIME_DRIVER: 'process',
    ...env,
  });
  const app = await buildApp(config, { db: db.app });
  t.teardown(() => app.close());
  const subscribed = async (plan: string) => {
    const user = await db.system
      .insertInto('users')
      .values({ email: `${randomUUID()}@example.test`, name: 'payer' })
      .returning(['id', 'email'])
      .executeTakeFirstOrThrow();
    await db.system
      .insertInto('subscriptions')
      .values({ id: `sub_${randomUUID()}`, user_id: user.id, status: 'active', plan, updated_at: new Date() })
      .execute();
    return user;
  };
  const provision = (user: { id: string; email: string }, name: string) =>
    app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email }),
      payload: { name },
    });
  const count = async () =>
    Number(
      (
        await db.system
          .selectFrom('agents')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const hibernate = (id: string, hibernation: 'paused' | 'stopped') =>
    db.system.updateTable('agents').set({ status: 'suspended', hibernation }).where('id', '=', id).execute();
  return { subscribed, provision, count, hibernate };
}

t.test("at the platform's capacity, provisioning answers 503 {error, code} and records nothing", async (t) => {
  const p = await platform(t, { PLATFORM_AGENTS_MAX: '2' });
  const [a, b] = [await p.subscribed('collective'), await p.subscribed('solo')];
  t.equal((await p.provision(a, 'one')).statusCode, 201);
  t.equal((await p.provision(b, 'two')).statusCode, 201);
  const full = await p.provision(a, 'three');
  t.equal(full.statusCode, 503);
  t.same(full.json(), {
    error: 'The platform is at capacity: no more agents can run right now, try again later',
    code: 'PLATFORM_AT_CAPACITY',
  });
  t.equal(await p.count(), 2);
});

t.test("the platform's memory cap counts each agent at its plan's container size", async (t) => {
  const p = await platform(t, { PLATFORM_AGENTS_MAX: '0', PLATFORM_AGENT_MEMORY_MAX_GB: '20' });
  const network = await p.subscribed('network');
  t.equal((await p.provision(network, '16 GB')).statusCode, 201);
  const solo = await p.subscribed('solo');
  t.equal((await p.provision(solo, '2 GB')).statusCode, 201, '18 of 20 GB');
  const more = await p.provision(network, 'another 16 GB');
  t.equal(more.statusCode, 503);
  t.equal(more.json().code, 'PLATFORM_AT_CAPACITY');
});

t.test(
  "a hibernating agent that was stopped holds no memory against the platform's cap; a paused one holds all of it",
  async (t) => {
    const p = await platform(t, { PLATFORM_AGENTS_MAX: '0', PLATFORM_AGENT_MEMORY_MAX_GB: '20' });
    const network = await p.subscribed('network');
    const first = await p.provision(network, '16 GB');
    t.equal(first.statusCode, 201);
    await p.hibernate(first.json().agent.id, 'paused');
    t.equal((await p.provision(network, 'another 16 GB')).statusCode, 503, 'paused: its memory is still held');
    await p.hibernate(first.json().agent.id, 'stopped');
    t.equal((await p.provision(network, 'another 16 GB')).statusCode, 201, 'stopped: its memory is free');
  },
);

t.test(
  'an unlimited plan still holds at most AGENT_MEMORY_PER_USER_MAX_GB and AGENT_CPUS_PER_USER_MAX at once',
  async (t) => {
    const p = await platform(t, { AGENT_MEMORY_PER_USER_MAX_GB: '32', AGENT_CPUS_PER_USER_MAX: '64' });
    const user = await p.subscribed('network');
    t.equal((await p.provision(user, 'one')).statusCode, 201);
    t.equal((await p.provision(user, 'two')).statusCode, 201);
    const third = await p.provision(user, 'three');
    t.equal(third.statusCode, 429);
    t.same(third.json(), {
      error: 'Your running agents already hold the most memory and CPUs one user may have: stop one first',
      code: 'AGENT_RESOURCES_LIMIT',
    });
    t.equal(await p.count(), 2);
  },
);
