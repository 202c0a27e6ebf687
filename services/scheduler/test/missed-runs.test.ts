import t from 'tap';
import { randomBytes } from 'node:crypto';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { createQueues, QUEUES, type Job } from '@agentyard/queue';
import { SCHEDULED_TASK_PAUSED_MAIL_JOB } from '@agentyard/proto-schemas';
import { MISSED_LISTED_MAX, planFiring } from '../src/domain/missed-runs.ts';
import { batchJobs, ONE_SHOT_JOB, PROMPT_BATCH_JOB, RUN_NOW_JOB } from '../src/domain/timers.ts';
import { build, startWorkers } from './helper.ts';
import { startHooksReceiver } from './support/hooks-receiver.ts';
import { userWithAgent } from './support/agent-rows.ts';

// Runs missed while the platform, the scheduler or the agent was down are rows, never silence; a
// task that keeps failing pauses itself and its owner is mailed. The real scheduler app and worker,
// BullMQ in Redis, and a real HTTP server standing in for the agent's hooks.
t.setTimeout(120_000);

const MINUTE = 60_000;
const at = (iso: string) => new Date(iso);
const plan = (over: Partial<Parameters<typeof planFiring>[0]>) =>
  planFiring({
    timer: { cronSchedule: '* * * * *', timezone: 'UTC' },
    nextRun: at('2026-05-01T10:00:00Z'),
    policy: 'skip',
    agentStatus: 'running',
    due: at('2026-05-01T10:00:00Z'),
    now: at('2026-05-01T10:00:00.300Z'),
    graceMs: MINUTE,
    ...over,
  });
const dues = (runs: { due: Date }[]) => runs.map((r) => r.due.toISOString());

t.test('the plan of one firing accounts for every due time once', async (t) => {
  t.same(
    plan({}),
    { missed: [], deliver: { due: at('2026-05-01T10:00:00Z'), status: 'delivered' }, next: at('2026-05-01T10:01:00Z') },
    'on time: delivered',
  );
  t.same(
    plan({ nextAfterDue: at('2026-05-01T10:01:00Z') }),
    plan({}),
    "on time, with the batch's next firing given: the same plan",
  );
  t.same(
    plan({ nextAfterDue: at('2026-05-01T10:01:00Z'), agentStatus: 'stopped' }).deliver,
    null,
    'the short way still sees a stopped agent',
  );
  const skipped = plan({ nextRun: at('2026-05-01T09:57:00Z') });
  t.same(
    dues(skipped.missed),
    ['2026-05-01T09:57:00.000Z', '2026-05-01T09:58:00.000Z', '2026-05-01T09:59:00.000Z'],
    'due times no firing took are missed',
  );
  t.match(skipped.missed[0], { error: 'the scheduler was not running at its due time' });
  t.same(skipped.deliver, { due: at('2026-05-01T10:00:00Z'), status: 'delivered' });

  // Handled at 10:03:30 for 10:00: the platform was down across 10:00..10:03.
  const late = { now: at('2026-05-01T10:03:30Z') };
  const skip = plan(late);
  t.same(
    dues(skip.missed),
    ['2026-05-01T10:00:00.000Z', '2026-05-01T10:01:00.000Z', '2026-05-01T10:02:00.000Z', '2026-05-01T10:03:00.000Z'],
    'skip: all missed',
  );
  t.equal(skip.deliver, null);
  t.match(skip.missed[3], { error: /not running at its due time \(missed-run policy skip\)/ });
  t.same(skip.next, at('2026-05-01T10:04:00Z'), 'next run after now: later firings of the outage take nothing');
  const once = plan({ ...late, policy: 'run-once' });
  t.same(
    dues(once.missed),
    ['2026-05-01T10:00:00.000Z', '2026-05-01T10:01:00.000Z', '2026-05-01T10:02:00.000Z'],
    'run-once: the earlier ones missed',
  );
  t.same(once.deliver, { due: at('2026-05-01T10:03:00Z'), status: 'ran-late' }, 'the latest caught up once');

  const stopped = plan({ agentStatus: 'stopped', policy: 'run-once' });
  t.same(stopped.deliver, null, 'a stopped agent gets nothing');
  t.same(stopped.missed, [{ due: at('2026-05-01T10:00:00Z'), error: 'the agent was stopped at its due time' }]);

  const long = plan({
    timer: { cronSchedule: '* * * * * *', timezone: 'UTC' },
    nextRun: at('2026-05-01T08:00:00Z'),
    now: at('2026-05-01T10:00:00.300Z'),
  });
  t.equal(long.missed.length, MISSED_LISTED_MAX, 'a long outage lists its first due times one by one');
  t.match(long.missed.at(-1), { error: /; so was every due time after it and before 2026-05-01T10:00:00.000Z$/ });
  t.same(long.deliver, { due: at('2026-05-01T10:00:00Z'), status: 'delivered' });
});

const env = {
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-missed-${randomBytes(3).toString('hex')}`,
  SCHEDULER_DELIVERY_ATTEMPTS: '1',
  SCHEDULER_MIN_INTERVAL_SECONDS: '*:1',
  SCHEDULER_MISSED_GRACE_SECONDS: '5',
  SCHEDULE_FAILURE_LIMIT: '2',
};
// The batch delivers every task due at a time: other files' tasks would be delivered here too.
await useOwnDatabase(t);
const token = randomBytes(24).toString('base64url');
const receiver = await startHooksReceiver(token);
t.teardown(() => receiver.close());
const app = await build(t, env);
const workers = await startWorkers(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
const prompts = queues.get(QUEUES.scheduledPrompts);
t.teardown(async () => {
  await prompts.obliterate({ force: true });
  await queues.get(QUEUES.email).obliterate({ force: true });
  await queues.close();
});

/** The next job of `name` the worker finishes. */
const jobDone = (name: string, taskId?: () => string | undefined) =>
  new Promise<Job>((resolve) => {
    const onDone = (job: Job) => {
      if (job.name !== name || (taskId && job.data.taskId !== taskId())) return;
      workers.prompts.off('completed', onDone);
      resolve(job);
    };
    workers.prompts.on('completed', onDone);
  });
const batchDone = (cronSchedule: string) =>
  new Promise<Job>((resolve) => {
    const onDone = (job: Job) => {
      if (job.name !== PROMPT_BATCH_JOB || job.data.cronSchedule !== cronSchedule) return;
      workers.prompts.off('completed', onDone);
      resolve(job);
    };
    workers.prompts.on('completed', onDone);
  });
const runsOf = async (headers: Record<string, string>, taskId: string) =>
  (await app.inject({ method: 'GET', url: `/api/scheduled-tasks/${taskId}/runs?limit=100`, headers })).json().runs as {
    dueAt: string;
    status: string;
    manual: boolean;
    error: string | null;
  }[];

/** A task on `cron` that no job scheduler fires (created disabled, switched on in the row), its nextRun `minutesAgo` back. */
async function quietTask(
  owner: Awaited<ReturnType<typeof userWithAgent>>,
  cron: string,
  policy: 'skip' | 'run-once',
  minutesAgo: number,
) {
  const task = (
    await app.inject({
      method: 'POST',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: {
        name: policy,
        cronSchedule: cron,
        prompt: `catch up ${policy}`,
        agentId: owner.agentId,
        enabled: false,
        missedRunPolicy: policy,
      },
    })
  ).json();
  const nextRun = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - minutesAgo * MINUTE);
  await systemDb()
    .updateTable('scheduled_tasks')
    .set({ enabled: true, next_run: nextRun })
    .where('id', '=', task.id)
    .execute();
  return { id: task.id as string, nextRun };
}

t.test(
  'a firing handled after an outage: skip records each due time missed; run-once delivers the latest once as ran-late',
  async (t) => {
    const owner = await userWithAgent(receiver.url, token);
    const cron = '*/1 * * * *';
    const skip = await quietTask(owner, cron, 'skip', 3);
    const once = await quietTask(owner, cron, 'run-once', 3);
    // The firing of 3 minutes ago, handled now: as a worker coming back after the outage does.
    const done = batchDone(cron);
    await prompts.addBulk(
      batchJobs({ cronSchedule: cron, timezone: 'UTC' }, skip.nextRun.getTime(), 1, { attempts: 1, retryDelayMs: 100 }),
    );
    await done;
    const skipRuns = await runsOf(owner.headers, skip.id);
    t.ok(skipRuns.length >= 3, `every due time of the outage is a row (${skipRuns.length})`);
    t.ok(
      skipRuns.every((r) => r.status === 'missed' && /not running at its due time/.test(r.error ?? '')),
      'skip: all missed, with the reason',
    );
    t.equal(receiver.calls.filter((c) => c.body.message === 'catch up skip').length, 0, 'skip delivered nothing');
    const onceRuns = await runsOf(owner.headers, once.id);
    t.equal(onceRuns.length, skipRuns.length, 'the same due times accounted for');
    t.equal(onceRuns[0]!.status, 'ran-late', 'the latest ran late');
    t.ok(
      onceRuns.slice(1).every((r) => r.status === 'missed'),
      'the earlier ones missed',
    );
    t.equal(receiver.calls.filter((c) => c.body.message === 'catch up run-once').length, 1, 'run-once delivered once');
    const dueTimes = [...skipRuns, ...onceRuns].map((r) => r.dueAt);
    t.equal(new Set(onceRuns.map((r) => r.dueAt)).size, onceRuns.length, 'no due time twice');
    t.ok(
      dueTimes.every((d) => new Date(d).getTime() >= skip.nextRun.getTime()),
      'none before the first unsettled due time',
    );
    for (const id of [skip.id, once.id])
      await systemDb().updateTable('scheduled_tasks').set({ enabled: false }).where('id', '=', id).execute();
  },
);

t.test(
  'a task whose agent is stopped records the firing as missed with the reason; the agent is not called',
  async (t) => {
    const owner = await userWithAgent(receiver.url, token);
    await systemDb().updateTable('agents').set({ status: 'stopped' }).where('id', '=', owner.agentId).execute();
    const cron = '*/2 * * * * *';
    const done = batchDone(cron);
    const task = (
      await app.inject({
        method: 'POST',
        url: '/api/scheduled-tasks',
        headers: owner.headers,
        payload: { name: 'asleep', cronSchedule: cron, prompt: 'Are you there', agentId: owner.agentId },
      })
    ).json();
    await done;
    await app.inject({
      method: 'PUT',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: { taskId: task.id, enabled: false },
    });
    const runs = await runsOf(owner.headers, task.id);
    t.ok(runs.length >= 1);
    t.match(runs.at(-1), { status: /^missed$/, error: 'the agent was stopped at its due time' });
    t.equal(receiver.calls.filter((c) => c.body.sessionKey === `scheduled:${task.id}`).length, 0, 'never delivered');

    // Run now and a one-shot, the same: missed with the reason, the agent not called.
    const ran = jobDone(RUN_NOW_JOB);
    const started = await app.inject({
      method: 'POST',
      url: `/api/scheduled-tasks/${task.id}/run`,
      headers: owner.headers,
    });
    t.equal(started.statusCode, 202);
    await ran;
    t.match(
      (await runsOf(owner.headers, task.id)).find((r) => r.manual),
      { status: /^missed$/, error: 'the agent was stopped when the run was asked for' },
    );
    let oneShotId: string | undefined;
    const once = jobDone(ONE_SHOT_JOB, () => oneShotId);
    const oneShot = (
      await app.inject({
        method: 'POST',
        url: '/api/scheduled-tasks',
        headers: owner.headers,
        payload: {
          name: 'once',
          runAt: new Date(Date.now() + 1000).toISOString(),
          prompt: 'Once',
          agentId: owner.agentId,
        },
      })
    ).json();
    oneShotId = oneShot.id;
    await once;
    t.match(await runsOf(owner.headers, oneShot.id), [
      { status: /^missed$/, error: 'the agent was stopped at its due time' },
    ]);
    t.equal(
      receiver.calls.filter((c) => c.body.sessionKey === `scheduled:${oneShot.id}`).length,
      0,
      'the one-shot never delivered',
    );
  },
);

t.test(
  'at SCHEDULE_FAILURE_LIMIT failed runs in a row a task pauses itself, says why and its owner is mailed; enabling it resets the count',
  async (t) => {
    const owner = await userWithAgent('http://127.0.0.1:9', token); // nothing listens: every delivery fails
    const cron = '*/3 * * * * *';
    const task = (
      await app.inject({
        method: 'POST',
        url: '/api/scheduled-tasks',
        headers: owner.headers,
        payload: { name: 'doomed', cronSchedule: cron, prompt: 'p', agentId: owner.agentId },
      })
    ).json();
    const email = queues.get(QUEUES.email);
    let mail: Job | undefined;
    for (let firings = 0; firings < 5 && !mail; firings++) {
      await batchDone(cron);
      mail = (await email.getJobs(['waiting', 'delayed', 'prioritized'])).find((job) => job.data.taskId === task.id);
    }
    t.ok(mail, 'a mail job for the owner');
    t.match(mail, { name: SCHEDULED_TASK_PAUSED_MAIL_JOB, data: { kind: /^scheduled-task-paused$/, taskId: task.id } });
    const listed = (
      await app.inject({ method: 'GET', url: `/api/scheduled-tasks?agentId=${owner.agentId}`, headers: owner.headers })
    ).json().tasks[0];
    t.match(listed, {
      enabled: false,
      nextRun: null,
      lastStatus: /^failed$/,
      consecutiveFailures: 2,
      pausedReason: /^Paused after 2 failed runs in a row; the last: hook agent: connection failed/,
    });
    const runs = await runsOf(owner.headers, task.id);
    t.equal(runs.filter((r) => r.status === 'failed').length, 2, 'two failed runs, then no more');
    const enabled = (
      await app.inject({
        method: 'PUT',
        url: '/api/scheduled-tasks',
        headers: owner.headers,
        payload: { taskId: task.id, enabled: true },
      })
    ).json();
    t.match(enabled, { enabled: true, consecutiveFailures: 0, pausedReason: null });
    await app.inject({
      method: 'DELETE',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: { taskId: task.id },
    });
  },
);
