import t from 'tap';
import { randomBytes } from 'node:crypto';
import { sql, withUser } from '@agentyard/db';
import { appDb, identityHeaders, systemDb } from '@agentyard/testing';
import { createQueues, QUEUES } from '@agentyard/queue';
import { createTask, deleteTask } from '../src/domain/scheduled-tasks.ts';
import { cronTimerId } from '../src/domain/timers.ts';
import { build } from './helper.ts';
import { userWithAgent } from './support/agent-rows.ts';

const env = { QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-tasks-api-${randomBytes(3).toString('hex')}` };
const app = await build(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
const prompts = queues.get(QUEUES.scheduledPrompts);
t.teardown(async () => {
  await prompts.obliterate({ force: true });
  await queues.close();
});
const owner = await userWithAgent(null);
const stranger = await userWithAgent(null);
const timerOf = (cronSchedule: string) => prompts.getJobScheduler(cronTimerId({ cronSchedule, timezone: 'UTC' }));
const post = (headers: Record<string, string>, payload: object) =>
  app.inject({ method: 'POST', url: '/api/scheduled-tasks', headers, payload });

t.test(
  'create: 201 with nextRun from the cron, a job scheduler for its expression, and the list newest first',
  async (t) => {
    const first = await post(owner.headers, {
      name: 'hourly',
      cronSchedule: '0 * * * *',
      prompt: 'ping',
      agentId: owner.agentId,
      description: 'top of the hour',
    });
    t.equal(first.statusCode, 201);
    const a = first.json();
    t.match(a, {
      id: String,
      name: /^hourly$/,
      description: 'top of the hour',
      cronSchedule: '0 * * * *',
      prompt: /^ping$/,
      enabled: true,
      lastRun: null,
      agentId: owner.agentId,
    });
    const next = new Date(a.nextRun);
    t.equal(next.getUTCMinutes(), 0);
    t.ok(next.getTime() > Date.now() && next.getTime() <= Date.now() + 3600_000);
    t.match(await timerOf('0 * * * *'), { pattern: '0 * * * *', tz: /^UTC$/ });

    const b = (
      await post(owner.headers, {
        name: 'seconds',
        cronSchedule: '30  */5  * * * *',
        prompt: 'p',
        agentId: owner.agentId,
        enabled: false,
      })
    ).json();
    t.match(b, { enabled: false, nextRun: null, cronSchedule: '30 */5 * * * *' });
    t.notOk(await timerOf('30 */5 * * * *'), 'a disabled task puts no job scheduler on its expression');

    const list = (await app.inject({ method: 'GET', url: '/api/scheduled-tasks', headers: owner.headers })).json();
    t.same(
      list.tasks.map((x: { id: string }) => x.id),
      [b.id, a.id],
    );
    t.equal(list.count, 2);
    t.equal(list.nextCursor, null, 'one page holds them all');
    const filtered = (
      await app.inject({
        method: 'GET',
        url: `/api/scheduled-tasks?agentId=${stranger.agentId}`,
        headers: owner.headers,
      })
    ).json();
    t.same(filtered, { tasks: [], count: 0, nextCursor: null });
    t.same((await app.inject({ method: 'GET', url: '/api/scheduled-tasks', headers: stranger.headers })).json(), {
      tasks: [],
      count: 0,
      nextCursor: null,
    });
  },
);

t.test('the agent must belong to the caller, the task too', async (t) => {
  const res = await post(owner.headers, {
    name: 'x',
    cronSchedule: '0 * * * *',
    prompt: 'p',
    agentId: stranger.agentId,
  });
  t.equal(res.statusCode, 404);
  t.same(res.json(), { error: 'Agent not found' });
  const mine = (
    await post(owner.headers, { name: 'mine', cronSchedule: '0 * * * *', prompt: 'p', agentId: owner.agentId })
  ).json();
  for (const [method, payload] of [
    ['PUT', { taskId: mine.id, name: 'stolen' }],
    ['DELETE', { taskId: mine.id }],
  ] as const) {
    const r = await app.inject({ method, url: '/api/scheduled-tasks', headers: stranger.headers, payload });
    t.equal(r.statusCode, 404, method);
    t.same(r.json(), { error: 'Task not found' });
  }
  t.ok(await timerOf('0 * * * *'), "a stranger's delete left the scheduler alone");
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/scheduled-tasks', headers: identityHeaders() })).statusCode,
    401,
  );
});

t.test('update changes the schedule and the job scheduler with it', async (t) => {
  const task = (
    await post(owner.headers, { name: 'edit', cronSchedule: '0 * * * *', prompt: 'p', agentId: owner.agentId })
  ).json();
  const res = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: task.id, cronSchedule: '15 3 * * *', prompt: 'new prompt', description: null },
  });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { cronSchedule: '15 3 * * *', prompt: 'new prompt', description: null, enabled: true });
  t.equal(new Date(res.json().nextRun).getUTCHours(), 3);
  t.match(await timerOf('15 3 * * *'), { pattern: '15 3 * * *' });
  t.ok(await timerOf('0 * * * *'), 'the old expression keeps its scheduler while other tasks fire on it');

  const renamed = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: task.id, name: 'renamed' },
  });
  t.equal(
    renamed.json().nextRun,
    res.json().nextRun,
    'an edit that keeps the schedule keeps nextRun (the firing it is due for)',
  );
});

t.test('bad input: 400 with a message, nothing stored, no scheduler', async (t) => {
  const count = async () =>
    (await systemDb().selectFrom('scheduled_tasks').select('id').where('user_id', '=', owner.userId).execute()).length;
  const before = await count();
  const cases: [string, object, RegExp][] = [
    ['missing fields', { name: 'x' }, /^Missing required fields: name, cronSchedule, prompt, agentId$/],
    [
      'four fields',
      { name: 'x', cronSchedule: '* * * *', prompt: 'p', agentId: owner.agentId },
      /^Invalid cron schedule: expected 5 or 6 fields$/,
    ],
    [
      'seven fields',
      { name: 'x', cronSchedule: '0 0 0 * * * 2030', prompt: 'p', agentId: owner.agentId },
      /^Invalid cron schedule/,
    ],
    [
      'out of range',
      { name: 'x', cronSchedule: '61 * * * *', prompt: 'p', agentId: owner.agentId },
      /^Invalid cron schedule/,
    ],
    ['a macro', { name: 'x', cronSchedule: '@hourly', prompt: 'p', agentId: owner.agentId }, /^Invalid cron schedule/],
    [
      'blank prompt',
      { name: 'x', cronSchedule: '0 * * * *', prompt: '   ', agentId: owner.agentId },
      /prompt must not be blank/,
    ],
    ['not a uuid', { name: 'x', cronSchedule: '0 * * * *', prompt: 'p', agentId: 'abc' }, /agentId/],
  ];
  for (const [name, payload, error] of cases) {
    const res = await post(owner.headers, payload);
    t.equal(res.statusCode, 400, name);
    t.match(res.json().error, error, name);
  }
  const put = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { name: 'x' },
  });
  t.same([put.statusCode, put.json()], [400, { error: 'taskId is required' }]);
  const del = await app.inject({ method: 'DELETE', url: '/api/scheduled-tasks', headers: owner.headers, payload: {} });
  t.same([del.statusCode, del.json()], [400, { error: 'taskId is required' }]);
  const task = (
    await post(owner.headers, { name: 'keep', cronSchedule: '0 * * * *', prompt: 'p', agentId: owner.agentId })
  ).json();
  const badCron = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: task.id, cronSchedule: 'every day' },
  });
  t.equal(badCron.statusCode, 400);
  t.match(await timerOf('0 * * * *'), { pattern: '0 * * * *' }, 'the scheduler is unchanged');
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
  t.equal(await count(), before + 1);
});

t.test("an expression's scheduler stays when a task on it is created while its last one is deleted", async (t) => {
  const cron = '11 11 11 11 *';
  const scheduling = {
    timers: { queue: prompts, policy: { attempts: 1, retryDelayMs: 1000 } },
    limits: { tasksPerUser: 100, minIntervalSeconds: new Map([['*', 60]]), activeStatuses: ['active', 'trialing'] },
  };
  const timers = scheduling.timers;
  const input = (agentId: string) => ({ name: 'race', cronSchedule: cron, prompt: 'p', agentId });
  const last = await withUser(appDb(), owner.userId, (trx) =>
    createTask(trx, { userId: owner.userId, admin: false }, scheduling, input(owner.agentId)),
  );
  // The new task is inserted and its transaction held open before commit; the delete of the last
  // task runs meanwhile. It must wait for the new task (the expression's lock), not remove the scheduler.
  let commit = () => {};
  const held = new Promise<void>((resolve) => {
    commit = resolve;
  });
  let inserted = () => {};
  const insertedYet = new Promise<void>((resolve) => {
    inserted = resolve;
  });
  const creating = withUser(appDb(), stranger.userId, async (trx) => {
    const task = await createTask(trx, { userId: stranger.userId, admin: false }, scheduling, input(stranger.agentId));
    inserted();
    await held;
    return task;
  });
  await insertedYet;
  const deleting = withUser(appDb(), owner.userId, (trx) => deleteTask(trx, timers, last.id));
  let settled = false;
  const waitingOnLock = (async () => {
    while (!settled) {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`.execute(
        systemDb(),
      );
      if (rows[0]!.n > 0) return;
    }
  })();
  await Promise.race([deleting, waitingOnLock]);
  settled = true;
  commit();
  const [created] = await Promise.all([creating, deleting]);
  t.ok(await timerOf(cron), "the new task keeps the expression's scheduler");
  await withUser(appDb(), stranger.userId, (trx) => deleteTask(trx, timers, created.id));
  t.notOk(await timerOf(cron), 'gone with the last task');
});
