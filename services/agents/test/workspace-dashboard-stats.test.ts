import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createUserRow, subscribeUser, identityHeaders, systemDb } from '@agentyard/testing';
import { build } from './helper.ts';

const app = await build(t);

async function agent(userId: string, status: 'running' | 'active' | 'error' | 'pending', createdAt = new Date()) {
  const row = await systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'a',
      model: 'm',
      tools_profile: 'messaging',
      subdomain: `d-${randomUUID().slice(0, 12)}`,
      status,
      created_at: createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
const stats = (userId: string | null) =>
  app.inject({
    method: 'GET',
    url: '/api/dashboard/stats',
    headers: identityHeaders(userId ? { userId, email: 'x@example.test' } : {}),
  });

t.test("counts agents, new ones since midnight UTC, skills and tasks against the plan's limit", async (t) => {
  const user = await createUserRow({ plan: 'collective' });
  const midnight = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z');
  const a1 = await agent(user.id, 'running');
  await agent(user.id, 'active');
  await agent(user.id, 'error', new Date(midnight.getTime() - 1000));
  await agent(user.id, 'pending', midnight);
  await systemDb()
    .insertInto('scheduled_tasks')
    .values({ user_id: user.id, agent_id: a1, name: 't', cron_schedule: '0 * * * *', prompt: 'p', enabled: false })
    .execute();
  await systemDb()
    .insertInto('agent_configs')
    .values({
      user_id: user.id,
      config: { skills: { entries: { weather: { enabled: true }, search: {}, old: { enabled: false } } } },
    })
    .execute();
  const other = await createUserRow({ plan: 'network' });
  await agent(other.id, 'running');

  const res = await stats(user.id);
  t.equal(res.statusCode, 200);
  t.same(res.json(), {
    agents: { active: 2, total: 4, limit: 3, newToday: 3 },
    skills: { installed: 2 },
    tasks: { total: 1 },
  });
  t.same((await stats(other.id)).json(), {
    agents: { active: 1, total: 1, limit: 100, newToday: 1 },
    skills: { installed: 0 },
    tasks: { total: 0 },
  });
});

t.test("limits by the subscription's plan, 401 without a session, 404 for a user that is gone", async (t) => {
  // `free`: no subscription; a subscription naming a plan that does not exist gives none either.
  for (const [plan, limit] of [
    ['free', 1],
    ['solo', 1],
    ['collective', 3],
    ['label', 10],
    ['network', 100],
    ['mystery', 1],
  ] as const) {
    const user = await createUserRow({ plan });
    t.equal((await stats(user.id)).json().agents.limit, limit, plan);
  }
  const cancelled = await createUserRow();
  await subscribeUser(cancelled.id, 'network', 'canceled');
  t.equal((await stats(cancelled.id)).json().agents.limit, 1, "a cancelled subscription's plan no longer counts");
  t.equal((await stats(null)).statusCode, 401);
  const gone = await stats(randomUUID());
  t.same([gone.statusCode, gone.json()], [404, { error: 'User not found' }]);
});
