import t from 'tap';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import type { Job } from '@agentyard/queue';
import { PROMPT_BATCH_JOB, RUN_NOW_JOB } from '../src/domain/timers.ts';
import { deliveryStage } from './helper.ts';
import { userWithAgent } from './support/agent-rows.ts';

// The batch delivers every task due at a time: other files' tasks would be delivered here too.
await useOwnDatabase(t);

// Every firing is a run row the owner can page through; a run by hand is one too. The real
// scheduler app and worker, BullMQ in Redis, and a real HTTP server standing in for the agent's hooks.
t.setTimeout(120_000);
const { token, receiver, app, workers } = await deliveryStage(t, 'runs', { SCHEDULER_DELIVERY_ATTEMPTS: '1' });
const owner = await userWithAgent(receiver.url, token);
const stranger = await userWithAgent(null);

/** The next job of `name` the worker finishes whose data matches. */
const jobDone = (name: string, match: (data: Record<string, unknown>) => boolean = () => true) =>
  new Promise<Job>((resolve) => {
    const onDone = (job: Job) => {
      if (job.name !== name || !match(job.data)) return;
      workers.prompts.off('completed', onDone);
      resolve(job);
    };
    workers.prompts.on('completed', onDone);
  });
const inject = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers = owner.headers, payload?: object) =>
  app.inject({ method, url, headers, payload });
const runsOf = async (taskId: string, query = '') =>
  (await inject('GET', `/api/scheduled-tasks/${taskId}/runs${query}`)).json();

t.test(
  'each firing is a run row: delivered, then failed with its error, and the task counts failures in a row',
  async (t) => {
    const created = await inject('POST', '/api/scheduled-tasks', owner.headers, {
      name: 'tick',
      cronSchedule: '*/1 * * * * *',
      timezone: 'Europe/Berlin',
      prompt: 'Tick',
      agentId: owner.agentId,
    });
    t.equal(created.statusCode, 201);
    const task = created.json();
    await jobDone(PROMPT_BATCH_JOB, (data) => data.cronSchedule === '*/1 * * * * *');
    const first = await runsOf(task.id);
    // This stand-in agent has hooks only (no gateway token on record): its turn cannot be followed, so the run is settled as delivered.
    t.match(first.runs[0], {
      id: String,
      status: /^delivered$/,
      manual: false,
      error: null,
      reply: null,
      finishedAt: String,
    });
    t.ok(
      new Date(first.runs[0].startedAt).getTime() >= new Date(first.runs[0].dueAt).getTime(),
      'started at or after its due time',
    );

    receiver.failNext(2);
    await jobDone(PROMPT_BATCH_JOB, (data) => data.cronSchedule === '*/1 * * * * *');
    await jobDone(PROMPT_BATCH_JOB, (data) => data.cronSchedule === '*/1 * * * * *');
    await inject('PUT', '/api/scheduled-tasks', owner.headers, { taskId: task.id, enabled: false });
    const { runs } = await runsOf(task.id);
    const failed = runs.filter((r: { status: string }) => r.status === 'failed');
    t.ok(failed.length >= 1, 'the refused deliveries are failed runs');
    t.match(failed[0], { error: 'hook agent answered 500', finishedAt: String });
    const listed = (await inject('GET', '/api/scheduled-tasks'))
      .json()
      .tasks.find((x: { id: string }) => x.id === task.id);
    const row = await systemDb()
      .selectFrom('scheduled_tasks')
      .select(['last_status', 'consecutive_failures'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    t.match(listed, {
      lastStatus: row.last_status,
      consecutiveFailures: row.consecutive_failures,
      lastError: runs[0].error,
    });
    // Run rows and the task agree: one row per firing, none twice.
    const dues = runs.map((r: { dueAt: string }) => r.dueAt);
    t.equal(new Set(dues).size, dues.length, 'one row per due time');
  },
);

t.test('pages of runs with the cursor; a cursor not ours is 400', async (t) => {
  const task = (
    await inject('POST', '/api/scheduled-tasks', owner.headers, {
      name: 'pages',
      cronSchedule: '0 0 1 1 *',
      prompt: 'p',
      agentId: owner.agentId,
    })
  ).json();
  const base = Date.parse('2026-01-01T00:00:00Z');
  await systemDb()
    .insertInto('scheduled_task_runs')
    .values(
      [0, 1, 2].map((i) => ({
        task_id: task.id,
        user_id: owner.userId,
        due_at: new Date(base + i * 60_000),
        status: 'missed' as const,
        error: 'the scheduler was down',
      })),
    )
    .execute();
  const first = await runsOf(task.id, '?limit=2');
  t.same(
    first.runs.map((r: { dueAt: string }) => r.dueAt),
    [new Date(base + 120_000).toISOString(), new Date(base + 60_000).toISOString()],
  );
  const second = await runsOf(task.id, `?limit=2&cursor=${first.nextCursor}`);
  t.same(
    second.runs.map((r: { dueAt: string }) => r.dueAt),
    [new Date(base).toISOString()],
  );
  t.equal(second.nextCursor, null);
  const bad = await inject('GET', `/api/scheduled-tasks/${task.id}/runs?cursor=bm90LW91cnM`);
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { error: /Invalid cursor/ });
});

t.test("runs are the owner's: another user gets 404 for listing and for running", async (t) => {
  const task = (
    await inject('POST', '/api/scheduled-tasks', owner.headers, {
      name: 'mine',
      cronSchedule: '0 0 1 1 *',
      prompt: 'p',
      agentId: owner.agentId,
    })
  ).json();
  for (const [method, url] of [
    ['GET', `/api/scheduled-tasks/${task.id}/runs`],
    ['POST', `/api/scheduled-tasks/${task.id}/run`],
  ] as const) {
    const res = await inject(method, url, stranger.headers);
    t.equal(res.statusCode, 404, `${method} ${url}`);
    t.same(res.json(), { error: 'Task not found' });
  }
  t.equal(
    (await systemDb().selectFrom('scheduled_task_runs').select('id').where('task_id', '=', task.id).execute()).length,
    0,
    "the stranger's run never happened",
  );
});

t.test('run now: 202 with a pending run, delivered once, counted like any run', async (t) => {
  const task = (
    await inject('POST', '/api/scheduled-tasks', owner.headers, {
      name: 'now',
      cronSchedule: '0 0 1 1 *',
      prompt: 'Right now please',
      agentId: owner.agentId,
    })
  ).json();
  const done = jobDone(RUN_NOW_JOB);
  const res = await inject('POST', `/api/scheduled-tasks/${task.id}/run`);
  t.equal(res.statusCode, 202);
  const { run } = res.json();
  t.match(run, { id: String, status: /^pending$/ });
  const call = await receiver.next((c) => c.body.sessionKey === `scheduled:${task.id}`);
  t.match(call.body, { message: 'Right now please' });
  await done;
  const { runs } = await runsOf(task.id);
  t.has(runs, [{ id: run.id, status: 'delivered', manual: true, error: null }]);
  const listed = (await inject('GET', '/api/scheduled-tasks'))
    .json()
    .tasks.find((x: { id: string }) => x.id === task.id);
  t.match(listed, { lastStatus: /^delivered$/, consecutiveFailures: 0, lastRun: String });
  t.equal(receiver.calls.filter((c) => c.body.sessionKey === `scheduled:${task.id}`).length, 1, 'delivered once');
});
