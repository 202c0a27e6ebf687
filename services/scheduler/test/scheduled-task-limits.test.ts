import t from 'tap';
import { randomBytes } from 'node:crypto';
import { againstAnOpenTransaction, subscribeUser, systemDb, warmAppPool } from '@agentyard/testing';
import { createQueues, QUEUES } from '@agentyard/queue';
import { cronTimerId } from '../src/domain/timers.ts';
import { createTask } from '../src/domain/scheduled-tasks.ts';
import { parseMinIntervals } from '../src/domain/firing-limits.ts';
import { build } from './helper.ts';
import { userWithAgent } from './support/agent-rows.ts';

const env = {
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-task-limits-${randomBytes(3).toString('hex')}`,
  SCHEDULED_TASKS_PER_USER_MAX: '3',
  SCHEDULER_MIN_INTERVAL_SECONDS: 'label:10,network:1,*:60',
};
const app = await build(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
const prompts = queues.get(QUEUES.scheduledPrompts);
t.teardown(async () => {
  await prompts.obliterate({ force: true });
  await queues.close();
});
const post = (user: { headers: Record<string, string>; agentId: string }, cronSchedule = '0 * * * *', name = 'task') =>
  app.inject({
    method: 'POST',
    url: '/api/scheduled-tasks',
    headers: user.headers,
    payload: { name, cronSchedule, prompt: 'p', agentId: user.agentId },
  });
const tasksOf = async (userId: string) =>
  (await systemDb().selectFrom('scheduled_tasks').select('id').where('user_id', '=', userId).execute()).length;

t.test('a cron firing more often than once a minute is refused with 400, nothing stored, no scheduler', async (t) => {
  const user = await userWithAgent(null);
  for (const cron of ['* * * * * *', '*/30 * * * * *', '0,30 * * * * *', '0-59/20 * * * * *', '0,59 0,59 0,23 * * *']) {
    const res = await post(user, cron);
    t.equal(res.statusCode, 400, cron);
    t.match(
      res.json(),
      {
        code: /^SCHEDULE_TOO_FREQUENT$/,
        minimumIntervalSeconds: 60,
        error: /the free plan allows at most one firing every 60 s$/,
      },
      cron,
    );
    t.notOk(
      await prompts.getJobScheduler(cronTimerId({ cronSchedule: cron, timezone: 'UTC' })),
      `no scheduler for ${cron}`,
    );
  }
  t.equal(await tasksOf(user.userId), 0);
  t.equal((await post(user, '5 * * * * *')).statusCode, 201, 'a seconds field that fires once a minute is fine');
  t.equal((await post(user, '* * * * *')).statusCode, 201, 'every minute is fine');

  const task = (await post(user, '0 * * * *')).json();
  const put = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: user.headers,
    payload: { taskId: task.id, cronSchedule: '*/10 * * * * *' },
  });
  t.equal(put.statusCode, 400, 'an update to a faster cron is refused too');
  t.equal(
    (
      await systemDb()
        .selectFrom('scheduled_tasks')
        .select('cron_schedule')
        .where('id', '=', task.id)
        .executeTakeFirstOrThrow()
    ).cron_schedule,
    '0 * * * *',
  );
});

t.test(
  'the minimum follows the plan: a label subscription allows every 10 s, a network one every second',
  async (t) => {
    const label = await userWithAgent(null);
    await systemDb()
      .insertInto('subscriptions')
      .values({
        user_id: label.userId,
        id: `sub_${randomBytes(6).toString('hex')}`,
        plan: 'label',
        status: 'active',
        updated_at: new Date(),
      })
      .execute();
    t.equal((await post(label, '*/10 * * * * *')).statusCode, 201);
    const tooFast = await post(label, '*/5 * * * * *');
    t.match(
      [tooFast.statusCode, tooFast.json()],
      [400, { error: /the label plan allows at most one firing every 10 s$/ }],
    );
    const network = await userWithAgent(null);
    await subscribeUser(network.userId, 'network');
    t.equal((await post(network, '* * * * * *')).statusCode, 201);
    t.teardown(() => prompts.removeJobScheduler(cronTimerId({ cronSchedule: '* * * * * *', timezone: 'UTC' })));
  },
);

t.test("heartbeats meet the plan's minimum too", async (t) => {
  const strict = await build(t, { ...env, SCHEDULER_MIN_INTERVAL_SECONDS: '*:300' });
  const user = await userWithAgent(null);
  const save = (frequency: string) =>
    strict.inject({
      method: 'POST',
      url: '/api/heartbeat',
      headers: user.headers,
      payload: { agentId: user.agentId, frequency },
    });
  const res = await save('1m');
  t.match(
    [res.statusCode, res.json()],
    [400, { code: /^SCHEDULE_TOO_FREQUENT$/, error: /^A heartbeat every 1m fires every 60 s/ }],
  );
  t.notOk(
    await systemDb().selectFrom('heartbeats').select('agent_ref').where('user_id', '=', user.userId).executeTakeFirst(),
    'nothing saved',
  );
  t.equal((await save('5m')).statusCode, 200);
});

t.test('at the cap a new task is 429 and nothing is created', async (t) => {
  const user = await userWithAgent(null);
  for (let i = 0; i < 3; i++) t.equal((await post(user, '0 * * * *', `t${i}`)).statusCode, 201);
  const res = await post(user, '7 7 * * *', 'one too many');
  t.equal(res.statusCode, 429);
  t.same(res.json(), {
    error: 'Scheduled task limit reached: at most 3 per user; delete one first',
    code: 'SCHEDULED_TASK_LIMIT',
    limit: 3,
  });
  t.equal(await tasksOf(user.userId), 3);
  t.notOk(
    await prompts.getJobScheduler(cronTimerId({ cronSchedule: '7 7 * * *', timezone: 'UTC' })),
    'no scheduler for the refused task',
  );
  const other = await userWithAgent(null);
  t.equal((await post(other)).statusCode, 201, 'the cap is per user');
  const first = (await app.inject({ method: 'GET', url: '/api/scheduled-tasks', headers: user.headers })).json()
    .tasks[0];
  await app.inject({
    method: 'DELETE',
    url: '/api/scheduled-tasks',
    headers: user.headers,
    payload: { taskId: first.id },
  });
  t.equal((await post(user, '0 * * * *', 'after a delete')).statusCode, 201, 'a delete makes room');
});

t.test('concurrent creations at cap - 1: exactly one is created', async (t) => {
  const user = await userWithAgent(null);
  for (let i = 0; i < 2; i++) t.equal((await post(user, '0 * * * *', `t${i}`)).statusCode, 201);
  await warmAppPool();
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => post(user, '0 * * * *', `racer ${i}`)));
  t.same(results.map((r) => r.statusCode).sort(), [201, 429, 429, 429, 429, 429]);
  t.equal(await tasksOf(user.userId), 3);
});

t.test('a creation while another is still uncommitted at cap - 1 waits for it, then is refused', async (t) => {
  const user = await userWithAgent(null);
  for (let i = 0; i < 2; i++) t.equal((await post(user, '0 * * * *', `t${i}`)).statusCode, 201);
  const scheduling = {
    timers: { queue: prompts, policy: { attempts: 1, retryDelayMs: 1000 } },
    limits: { tasksPerUser: 3, minIntervalSeconds: parseMinIntervals('*:60'), activeStatuses: ['active', 'trialing'] },
  };
  const input = { name: 'first', cronSchedule: '0 * * * *', prompt: 'p', agentId: user.agentId };
  const [first, second] = await againstAnOpenTransaction(
    user.userId,
    (trx) => createTask(trx, { userId: user.userId, admin: false }, scheduling, input),
    () => post(user, '0 * * * *', 'second'),
  );
  t.equal(first.status, 'fulfilled');
  t.equal(second.status === 'fulfilled' && second.value.statusCode, 429);
  t.equal(await tasksOf(user.userId), 3);
});
