import t from 'tap';
import { randomBytes } from 'node:crypto';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { createQueues, QUEUES, type Job } from '@agentyard/queue';
import { nextFiring } from '../src/domain/cron.ts';
import { cronTimerId, ONE_SHOT_JOB } from '../src/domain/timers.ts';
import { build, startWorkers } from './helper.ts';
import { startHooksReceiver } from './support/hooks-receiver.ts';
import { userWithAgent } from './support/agent-rows.ts';

// The batch delivers every task due at a time: other files' tasks would be delivered here too.
await useOwnDatabase(t);

// Time zones, one-shot tasks and the policies' fields: the real scheduler app and worker, BullMQ in
// Redis, and a real HTTP server standing in for the agent's hooks.
t.setTimeout(120_000);
const env = {
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-zones-${randomBytes(3).toString('hex')}`,
  SCHEDULER_RETRY_DELAY_MS: '100',
};
const token = randomBytes(24).toString('base64url');
const receiver = await startHooksReceiver(token);
t.teardown(() => receiver.close());
const app = await build(t, env);
const workers = await startWorkers(t, env);
/** The next one-shot job of `taskId` the worker finishes (its delivery is then recorded on the task). */
const oneShotDone = (taskId: string) =>
  new Promise<void>((resolve) => {
    const onDone = (job: Job) => {
      if (job.name !== ONE_SHOT_JOB || job.data.taskId !== taskId) return;
      workers.prompts.off('completed', onDone);
      resolve();
    };
    workers.prompts.on('completed', onDone);
  });
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
const prompts = queues.get(QUEUES.scheduledPrompts);
t.teardown(async () => {
  await prompts.obliterate({ force: true });
  await queues.close();
});
const owner = await userWithAgent(receiver.url, token);
const post = (payload: object) =>
  app.inject({
    method: 'POST',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { name: 'n', prompt: 'p', agentId: owner.agentId, ...payload },
  });
const put = (payload: object) =>
  app.inject({ method: 'PUT', url: '/api/scheduled-tasks', headers: owner.headers, payload });
const row = (id: string) =>
  systemDb().selectFrom('scheduled_tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
/** The wall-clock hour and minute of `at` in `zone`. */
const wallClock = (at: Date, zone: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);

t.test(
  'daylight saving: a time that does not exist fires once, an hour later; a time that exists twice fires once, the first time',
  async (t) => {
    const berlin = (from: string, n: number) => {
      const out: string[] = [];
      let at = new Date(from);
      for (let i = 0; i < n; i++) out.push((at = nextFiring('30 2 * * *', at, 'Europe/Berlin')).toISOString());
      return out;
    };
    // 2026-03-29: clocks go 02:00 CET -> 03:00 CEST, so 02:30 does not exist.
    t.same(
      berlin('2026-03-28T12:00:00Z', 3),
      ['2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z'],
      'spring forward: 03:30 CEST, once',
    );
    // 2026-10-25: clocks go 03:00 CEST -> 02:00 CET, so 02:30 happens twice.
    t.same(
      berlin('2026-10-24T12:00:00Z', 3),
      ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z'],
      'fall back: 02:30 CEST, once',
    );
    t.equal(
      nextFiring('0 9 * * *', new Date('2026-07-01T00:00:00Z'), 'America/New_York').toISOString(),
      '2026-07-01T13:00:00.000Z',
      '09:00 EDT',
    );
    t.equal(
      nextFiring('0 9 * * *', new Date('2026-12-01T00:00:00Z'), 'America/New_York').toISOString(),
      '2026-12-01T14:00:00.000Z',
      '09:00 EST',
    );
  },
);

t.test(
  'a task in a zone: nextRun is 09:00 there, its scheduler fires in that zone, and the zone is canonical',
  async (t) => {
    const res = await post({ cronSchedule: '0 9 * * *', timezone: 'europe/berlin' });
    t.equal(res.statusCode, 201, res.body);
    const task = res.json();
    t.has(task, {
      timezone: 'Europe/Berlin',
      runAt: null,
      missedRunPolicy: 'skip',
      overlapPolicy: 'skip',
      lastError: null,
    });
    t.equal(wallClock(new Date(task.nextRun), 'Europe/Berlin'), '09:00');
    t.match(await prompts.getJobScheduler(cronTimerId({ cronSchedule: '0 9 * * *', timezone: 'Europe/Berlin' })), {
      pattern: '0 9 * * *',
      tz: /^Europe\/Berlin$/,
    });
    const moved = (
      await put({ taskId: task.id, timezone: 'Asia/Tokyo', missedRunPolicy: 'run-once', overlapPolicy: 'queue' })
    ).json();
    t.has(moved, { timezone: 'Asia/Tokyo', missedRunPolicy: 'run-once', overlapPolicy: 'queue' });
    t.equal(wallClock(new Date(moved.nextRun), 'Asia/Tokyo'), '09:00');
    t.ok(
      await prompts.getJobScheduler(cronTimerId({ cronSchedule: '0 9 * * *', timezone: 'Asia/Tokyo' })),
      "Tokyo's scheduler",
    );
    const kolkata = (await put({ taskId: task.id, timezone: 'Asia/Kolkata' })).json();
    t.equal(
      kolkata.timezone,
      'Asia/Kolkata',
      "a valid name the runtime's list spells otherwise (Asia/Calcutta) keeps the user's spelling",
    );
    t.equal(wallClock(new Date(kolkata.nextRun), 'Asia/Kolkata'), '09:00');
    t.notOk(
      await prompts.getJobScheduler(cronTimerId({ cronSchedule: '0 9 * * *', timezone: 'Europe/Berlin' })),
      "Berlin's went with its last task",
    );
    t.notOk(
      await prompts.getJobScheduler(cronTimerId({ cronSchedule: '0 9 * * *', timezone: 'Asia/Tokyo' })),
      "and Tokyo's",
    );
  },
);

t.test('bad schedules answer 400 and store nothing', async (t) => {
  const before = (
    await systemDb().selectFrom('scheduled_tasks').select('id').where('user_id', '=', owner.userId).execute()
  ).length;
  const soon = new Date(Date.now() + 3600_000).toISOString();
  for (const [payload, error] of [
    [
      { cronSchedule: '0 9 * * *', timezone: 'Mars/Olympus_Mons' },
      'Invalid timezone "Mars/Olympus_Mons": expected an IANA zone such as Europe/Berlin',
    ],
    [
      { cronSchedule: '0 9 * * *', runAt: soon },
      'Pass either cronSchedule (a repeating task) or runAt (a one-shot task), not both',
    ],
    [{}, 'Missing required fields: name, cronSchedule, prompt, agentId'],
    [{ runAt: new Date(Date.now() - 60_000).toISOString() }, 'runAt must be in the future'],
    [{ runAt: new Date(Date.now() + 400 * 86_400_000).toISOString() }, 'runAt must be within a year from now'],
  ] as const) {
    const res = await post(payload);
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.same(res.json(), { error }, JSON.stringify(payload));
  }
  t.equal(
    (await systemDb().selectFrom('scheduled_tasks').select('id').where('user_id', '=', owner.userId).execute()).length,
    before,
  );
});

t.test(
  'a one-shot task is delivered once at its runAt, then kept disabled; switching it to a cron and back works',
  async (t) => {
    const runAt = new Date(Date.now() + 1500);
    const created = await post({
      name: 'remind me',
      prompt: 'Call the dentist',
      runAt: runAt.toISOString(),
      timezone: 'Europe/Berlin',
    });
    t.equal(created.statusCode, 201, created.body);
    const task = created.json();
    const done = oneShotDone(task.id);
    t.match(task, { cronSchedule: null, runAt: runAt.toISOString(), nextRun: runAt.toISOString(), enabled: true });
    const call = await receiver.next((c) => c.body.sessionKey === `scheduled:${task.id}`);
    t.ok(call.at >= runAt.getTime(), 'not before its time');
    t.match(call.body, { message: 'Call the dentist', name: 'remind me' });
    await done;
    t.match(await row(task.id), { enabled: false, next_run: null, last_error: null });
    t.ok((await row(task.id)).last_run, 'lastRun recorded');
    t.equal(receiver.calls.filter((c) => c.body.sessionKey === `scheduled:${task.id}`).length, 1, 'delivered once');

    const again = await put({ taskId: task.id, enabled: true });
    t.equal(again.statusCode, 400, 'a delivered one-shot needs a new runAt to run again');
    const cron = (await put({ taskId: task.id, cronSchedule: '0 9 * * 1', enabled: true })).json();
    t.match(cron, { cronSchedule: '0 9 * * 1', runAt: null, enabled: true, timezone: /^Europe\/Berlin$/ });
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const back = (await put({ taskId: task.id, runAt: later })).json();
    t.match(back, { cronSchedule: null, runAt: later, nextRun: later, enabled: true });
    t.notOk(
      await prompts.getJobScheduler(cronTimerId({ cronSchedule: '0 9 * * 1', timezone: 'Europe/Berlin' })),
      'no scheduler left for the cron it had',
    );
  },
);
