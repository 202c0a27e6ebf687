import t from 'tap';
import { registry } from '@agentyard/observability';
import { once } from 'node:events';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { QUEUES, type Job } from '@agentyard/queue';
import { batchJobs, CRON_FIRING_JOB, cronTimerId, PROMPT_BATCH_JOB } from '../src/domain/timers.ts';
import { NOT_SENT_AGAIN } from '../src/domain/run-records.ts';
import { deliveryStage, startWorkers } from './helper.ts';
import { userWithAgent } from './support/agent-rows.ts';

// The batch delivers every task due at a time: other files' tasks would be delivered here too.
await useOwnDatabase(t);

// End to end: the real scheduler app, BullMQ job schedulers in Redis, the real worker, and a real
// HTTP server standing in for the agent's hooks. Every-second (6-field) crons keep it quick; small
// batches and 3 deliveries at once per worker make a firing of a few tasks span several batch jobs.
t.setTimeout(120_000);
// Every-second crons make firings arrive within a test's patience; the platform's default minimum is a minute.
const { env, token, receiver, app, workers, queues } = await deliveryStage(t, 'delivery', {
  SCHEDULER_RETRY_DELAY_MS: '100',
  SCHEDULER_BATCH_SIZE: '4',
  SCHEDULER_CONCURRENCY: '3',
});
const owner = await userWithAgent(receiver.url, token);

async function createTask(name: string, prompt: string, cronSchedule = '* * * * * *') {
  const res = await app.inject({
    method: 'POST',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { name, cronSchedule, prompt, agentId: owner.agentId },
  });
  t.equal(res.statusCode, 201);
  return res.json() as { id: string };
}
const callsFor = (taskId: string) => receiver.calls.filter((c) => c.body.sessionKey === `scheduled:${taskId}`);
const task = (id: string) =>
  systemDb().selectFrom('scheduled_tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const prompts = queues.get(QUEUES.scheduledPrompts);
const timerOf = (cronSchedule: string) => prompts.getJobScheduler(cronTimerId({ cronSchedule, timezone: 'UTC' }));
/** The next batch job the worker finishes (its deliveries are then recorded on the tasks). */
// A batch of `cronSchedule`'s firings when given: timers restored from the run's task rows (other
// files' tasks among them) may fire batches of their own on this worker meanwhile.
const batchDone = (worker: typeof workers.prompts, cronSchedule?: string) =>
  new Promise<Job>((resolve) => {
    const onDone = (job: Job) => {
      if (job.name !== PROMPT_BATCH_JOB || (cronSchedule && job.data.cronSchedule !== cronSchedule)) return;
      worker.off('completed', onDone);
      resolve(job);
    };
    worker.on('completed', onDone);
  });

t.test("a scheduled prompt reaches the agent's hooks with its token, and lastRun/nextRun move on", async (t) => {
  const created = await createTask('morning brief', 'Summarise the overnight news');
  const call = await receiver.next((c) => c.body.sessionKey === `scheduled:${created.id}` && c.status === 200);
  t.equal(call.path, '/hooks/agent');
  t.equal(call.authorization, `Bearer ${token}`);
  t.match(call.body, {
    message: 'Summarise the overnight news',
    name: 'morning brief',
    sessionMode: /^persistent$/,
    timeoutSeconds: 600,
  });
  await batchDone(workers.prompts, '* * * * * *');
  const row = await task(created.id);
  t.ok(row.last_run, 'lastRun recorded');
  t.ok(row.next_run && row.next_run.getTime() > row.last_run!.getTime(), 'nextRun after lastRun');
  const listed = (await app.inject({ method: 'GET', url: '/api/scheduled-tasks', headers: owner.headers })).json();
  t.match(
    listed.tasks.find((x: { id: string }) => x.id === created.id),
    { lastRun: String, nextRun: String },
  );
  t.match(
    await registry.metrics(),
    /scheduler_firing_lag_seconds_count\{kind="cron"\} [1-9]/,
    "the firing's lag was measured",
  );
  await app.inject({
    method: 'DELETE',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: created.id },
  });
});

t.test(
  'a failed delivery is recorded, not reported as success, and retried with backoff until delivered',
  async (t) => {
    receiver.failNext(2);
    const created = await createTask('retried', 'Try again');
    const [failedJob] = (await once(workers.prompts, 'failed')) as [Job];
    const afterFailure = await task(created.id);
    t.match(afterFailure.last_error, /answered 500/, 'the failure is recorded on the task');
    t.ok(afterFailure.failed_attempts >= 1);
    t.equal(afterFailure.last_run, null, 'a failed delivery is not a run');
    const delivered = await new Promise<Job>((resolve) => {
      const onDone = (job: Job) => {
        if (job.id === failedJob.id) {
          workers.prompts.off('completed', onDone);
          resolve(job);
        }
      };
      workers.prompts.on('completed', onDone);
    });
    t.ok(delivered.attemptsMade >= 1, 'the same firing was delivered on a later attempt');
    t.ok(callsFor(created.id).filter((c) => c.status === 500).length >= 1);
    const row = await task(created.id);
    t.ok(row.last_run, 'lastRun set once delivered');
    t.equal(row.last_error, null);
    await app.inject({
      method: 'DELETE',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: { taskId: created.id },
    });
  },
);

t.test('a disabled or deleted task never fires again, while others keep firing', async (t) => {
  // Each on an every-second expression of its own, so each has its own job scheduler.
  const crons = { paused: '*/1 * * * * *', removed: '0-59 * * * * *', witness: '* * * * * *' };
  const paused = await createTask('paused', 'Pause me', crons.paused);
  const removed = await createTask('removed', 'Delete me', crons.removed);
  const witness = await createTask('witness', 'Keep going', crons.witness);
  await receiver.next((c) => c.body.sessionKey === `scheduled:${paused.id}` && c.status === 200);
  await receiver.next((c) => c.body.sessionKey === `scheduled:${removed.id}` && c.status === 200);

  const disable = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: paused.id, enabled: false },
  });
  t.match(disable.json(), { enabled: false, nextRun: null });
  const del = await app.inject({
    method: 'DELETE',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: removed.id },
  });
  t.same(del.json(), { success: true, taskId: removed.id });
  t.notOk(await timerOf(crons.paused), "the job scheduler of the disabled task's expression is gone");
  t.notOk(await timerOf(crons.removed), "the job scheduler of the deleted task's expression is gone");
  t.ok(await timerOf(crons.witness), "the witness's stays");

  // A delivery already under way when the change landed may still arrive; let two witness firings pass.
  for (let i = 0; i < 2; i++)
    await receiver.next((c) => c.body.sessionKey === `scheduled:${witness.id}` && c.status === 200);
  const before = { paused: callsFor(paused.id).length, removed: callsFor(removed.id).length };
  for (let i = 0; i < 3; i++)
    await receiver.next((c) => c.body.sessionKey === `scheduled:${witness.id}` && c.status === 200);
  t.same(
    { paused: callsFor(paused.id).length, removed: callsFor(removed.id).length },
    before,
    'no delivery over three more seconds of firings',
  );

  const enable = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: paused.id, enabled: true },
  });
  t.equal(enable.json().enabled, true);
  t.ok(await timerOf(crons.paused), "re-enabling puts the expression's scheduler back");
  await receiver.next((c) => c.body.sessionKey === `scheduled:${paused.id}` && c.status === 200);
  t.pass('re-enabled task fires again');
  for (const id of [paused.id, witness.id])
    await app.inject({
      method: 'DELETE',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: { taskId: id },
    });
});

t.test("an expression's job scheduler lives while any enabled task fires on it, whoever owns the task", async (t) => {
  const cron = '30 4 1 1 *'; // never fires during the test
  const other = await userWithAgent(receiver.url, token);
  const mine = await createTask('mine', 'Mine', cron);
  const theirs = await app.inject({
    method: 'POST',
    url: '/api/scheduled-tasks',
    headers: other.headers,
    payload: { name: 'theirs', cronSchedule: cron, prompt: 'Theirs', agentId: other.agentId },
  });
  t.equal(theirs.statusCode, 201);
  t.ok(await timerOf(cron), 'one scheduler for the expression');
  await app.inject({
    method: 'DELETE',
    url: '/api/scheduled-tasks',
    headers: owner.headers,
    payload: { taskId: mine.id },
  });
  t.ok(await timerOf(cron), "kept: another user's task still fires on it");
  const moved = await app.inject({
    method: 'PUT',
    url: '/api/scheduled-tasks',
    headers: other.headers,
    payload: { taskId: theirs.json().id, cronSchedule: '31 4 1 1 *' },
  });
  t.equal(moved.statusCode, 200);
  t.notOk(await timerOf(cron), 'gone once the last task moved to another expression');
  t.ok(await timerOf('31 4 1 1 *'), 'the new expression has its scheduler');
  await app.inject({
    method: 'DELETE',
    url: '/api/scheduled-tasks',
    headers: other.headers,
    payload: { taskId: theirs.json().id },
  });
  t.notOk(await timerOf('31 4 1 1 *'), 'deleting the last task on an expression removes its scheduler');
});

t.test(
  'a restarted worker puts back a lost job scheduler, drops a stale one, and delivers each firing once',
  async (t) => {
    const kept = await createTask('kept', 'Survive restarts');
    await workers.close();
    await prompts.removeJobScheduler(cronTimerId({ cronSchedule: '* * * * * *', timezone: 'UTC' })); // lost, as if Redis was restored from an old snapshot
    const stale = '7 7 7 7 *';
    await prompts.upsertJobScheduler(
      cronTimerId({ cronSchedule: stale, timezone: 'UTC' }),
      { pattern: stale, tz: 'UTC' },
      { name: CRON_FIRING_JOB, data: { cronSchedule: stale } },
    );
    const legacy = '00000000-0000-4000-8000-000000000000'; // a per-task scheduler of an earlier version
    await prompts.upsertJobScheduler(
      legacy,
      { pattern: '* * * * * *' },
      { name: 'scheduled-prompt', data: { taskId: legacy } },
    );
    const restarted = await startWorkers(t, env);
    t.ok(await timerOf('* * * * * *'), 'scheduler restored from the task rows');
    t.notOk(await timerOf(stale), 'scheduler of an expression no task uses removed');
    t.notOk(await prompts.getJobScheduler(legacy), 'per-task scheduler of an earlier version removed');
    for (let i = 0; i < 3; i++) await batchDone(restarted.prompts);
    const delivered = callsFor(kept.id)
      .filter((c) => c.status === 200)
      .map((c) => Math.floor(c.at / 1000));
    t.ok(delivered.length >= 1);
    const row = await task(kept.id);
    t.ok(row.last_delivered_due, 'each delivered firing is recorded by its due time, so a repeat of it is skipped');
    t.ok(row.next_run && row.next_run.getTime() > row.last_delivered_due!.getTime(), 'nextRun is past the last firing');
    t.equal(new Set(delivered).size, delivered.length, 'no second delivered more than once');
    await app.inject({
      method: 'DELETE',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: { taskId: kept.id },
    });
  },
);

t.test(
  'a worker restarted in the middle of a firing loses and duplicates nothing, at most its slots at once',
  async (t) => {
    const cron = '45 3 2 1 *'; // fired by hand below, never by the clock during the test
    const created: { id: string }[] = [];
    for (let i = 0; i < 25; i++) created.push(await createTask(`batch ${i}`, `Prompt ${i}`, cron));
    const due = (await task(created[0]!.id)).next_run!;
    const first = await startWorkers(t, env);
    receiver.hold();
    await prompts.add(
      CRON_FIRING_JOB,
      { cronSchedule: cron },
      { prevMillis: due.getTime(), jobId: `by-hand-${due.getTime()}` },
    );
    await receiver.inFlight(3);
    // Closed while its batches wait on the agent: it finishes what it claimed and claims nothing more.
    const closing = first.close();
    receiver.release();
    await closing;
    const byFirst = receiver.calls.filter((c) => created.some((x) => c.body.sessionKey === `scheduled:${x.id}`)).length;
    t.ok(byFirst > 0 && byFirst < 25, `the first worker delivered part of the firing (${byFirst} of 25)`);
    const second = await startWorkers(t, env);
    const settled = async () =>
      (
        await systemDb()
          .selectFrom('scheduled_tasks')
          .select('id')
          .where('cron_schedule', '=', cron)
          .where('last_delivered_due', '=', due)
          .execute()
      ).length === 25;
    for (;;) {
      const next = batchDone(second.prompts, cron);
      if (await settled()) break;
      await next;
    }
    for (const x of created) t.equal(callsFor(x.id).filter((c) => c.status === 200).length, 1, 'delivered once');
    t.equal(receiver.maxInFlight, 3, "never more deliveries at once than a worker's slots");
    const rows = await systemDb().selectFrom('scheduled_tasks').selectAll().where('cron_schedule', '=', cron).execute();
    for (const row of rows) {
      t.equal(row.last_delivered_due?.getTime(), due.getTime());
      t.ok(row.next_run && row.next_run > due, 'nextRun moved to the next firing');
      t.equal(row.claimed_by, null, 'claim let go');
    }
    for (const x of created)
      await app.inject({
        method: 'DELETE',
        url: '/api/scheduled-tasks',
        headers: owner.headers,
        payload: { taskId: x.id },
      });
  },
);

t.test(
  'a delivery that outlives its timeout is recorded as failed, never as a run, and retried on its own',
  async (t) => {
    const cron = '15 2 3 1 *'; // fired by hand below
    const slow = await createTask('slow', 'Take your time', cron);
    const due = (await task(slow.id)).next_run!;
    const worker = await startWorkers(t, {
      ...env,
      SCHEDULER_DELIVERY_TIMEOUT_MS: '300',
      SCHEDULER_RETRY_DELAY_MS: '60000',
    });
    receiver.hold();
    const batch = batchDone(worker.prompts, cron);
    await prompts.add(
      CRON_FIRING_JOB,
      { cronSchedule: cron },
      { prevMillis: due.getTime(), jobId: `by-hand-slow-${due.getTime()}` },
    );
    await batch;
    receiver.release();
    const row = await task(slow.id);
    t.match(row.last_error, /^hook agent: timed out after 300 ms$/);
    t.equal(row.last_run, null, 'not a run');
    t.equal(row.failed_attempts, 1);
    t.ok(row.next_run && row.next_run > due, 'the firing is settled: handed to its retry');
    const retry = await prompts.getJob(`retry-${slow.id}-${due.getTime()}`);
    t.has(retry, { name: 'prompt-retry', data: { taskId: slow.id, due: due.getTime() } });
    t.equal(await retry!.getState(), 'delayed', 'waiting out its backoff');
    await app.inject({
      method: 'DELETE',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: { taskId: slow.id },
    });
  },
);

t.test(
  "a batch job repeated after its worker died takes its own claims back, waits out another's, and takes an expired one",
  async (t) => {
    const cron = '20 1 4 1 *'; // fired by hand below
    const [own, others, expired] = [
      await createTask('own', 'Own', cron),
      await createTask('others', 'Others', cron),
      await createTask('expired', 'Expired', cron),
    ];
    const due = (await task(own.id)).next_run!;
    const [batch] = batchJobs({ cronSchedule: cron, timezone: 'UTC' }, due.getTime(), 1, {
      attempts: 1,
      retryDelayMs: 100,
    });
    const claim = (id: string, claimedBy: string, expiresInMs: number) =>
      systemDb()
        .updateTable('scheduled_tasks')
        .set({ claimed_by: claimedBy, claim_expires_at: new Date(Date.now() + expiresInMs) })
        .where('id', '=', id)
        .execute();
    await claim(own.id, batch!.opts.jobId, 600_000); // its first attempt claimed it, then the worker died
    await claim(others.id, 'batch-of-a-live-worker', 600_000);
    await claim(expired.id, 'batch-of-a-dead-worker', -1000);
    const worker = await startWorkers(t, env);
    const done = batchDone(worker.prompts, cron);
    await prompts.add(
      CRON_FIRING_JOB,
      { cronSchedule: cron },
      { prevMillis: due.getTime(), jobId: `by-hand-claims-${due.getTime()}` },
    );
    t.equal((await done).id, batch!.opts.jobId, "the firing's batch job, under the same id as before");
    t.equal(callsFor(own.id).length, 1, 'its own claim taken back and delivered');
    t.equal(callsFor(expired.id).length, 1, 'an expired claim taken over and delivered');
    t.equal(callsFor(others.id).length, 0, 'a live claim of another batch left alone');
    const left = await task(others.id);
    t.has(left, { claimed_by: 'batch-of-a-live-worker', last_run: null });
    t.same(left.next_run, due, 'still due: its claimant delivers it');
    for (const x of [own, others, expired])
      await app.inject({
        method: 'DELETE',
        url: '/api/scheduled-tasks',
        headers: owner.headers,
        payload: { taskId: x.id },
      });
  },
);

t.test(
  'a batch job repeated after its worker died mid-delivery does not send an in-flight prompt again, and says so',
  async (t) => {
    const cron = '25 1 5 1 *'; // fired by hand below
    const [inFlight, notYet] = [
      await createTask('in flight', 'In flight', cron),
      await createTask('not yet', 'Not yet', cron),
    ];
    const due = (await task(inFlight.id)).next_run!;
    const [batch] = batchJobs({ cronSchedule: cron, timezone: 'UTC' }, due.getTime(), 1, {
      attempts: 1,
      retryDelayMs: 100,
    });
    // Its first attempt claimed both and had marked one run in flight when the worker died.
    await systemDb()
      .updateTable('scheduled_tasks')
      .set({ claimed_by: batch!.opts.jobId, claim_expires_at: new Date(Date.now() + 600_000) })
      .where('id', 'in', [inFlight.id, notYet.id])
      .execute();
    await systemDb()
      .insertInto('scheduled_task_runs')
      .values({
        task_id: inFlight.id,
        user_id: owner.userId,
        due_at: due,
        status: 'pending',
        started_at: new Date(Date.now() - 5000),
      })
      .execute();
    const worker = await startWorkers(t, env);
    const done = batchDone(worker.prompts, cron);
    await prompts.add(
      CRON_FIRING_JOB,
      { cronSchedule: cron },
      { prevMillis: due.getTime(), jobId: `by-hand-in-flight-${due.getTime()}` },
    );
    t.equal((await done).id, batch!.opts.jobId, "the firing's batch job, under the same id as before");
    t.equal(callsFor(inFlight.id).length, 0, 'the in-flight prompt is not sent again');
    t.equal(callsFor(notYet.id).length, 1, 'the one not sent yet is delivered');
    const runs = await systemDb()
      .selectFrom('scheduled_task_runs')
      .select(['task_id', 'status', 'error', 'started_at'])
      .where('due_at', '=', due)
      .where('task_id', 'in', [inFlight.id, notYet.id])
      .execute();
    const runOf = (id: string) => runs.find((r) => r.task_id === id);
    t.match(runOf(inFlight.id), { status: /^failed$/, error: NOT_SENT_AGAIN }, 'recorded: the agent may have it');
    t.ok(runOf(inFlight.id)?.started_at, 'with the time its delivery started');
    t.has(runOf(notYet.id), { status: 'delivered', error: null });
    const settled = await task(inFlight.id);
    t.match(settled, { claimed_by: null, last_error: NOT_SENT_AGAIN });
    t.ok(settled.next_run && settled.next_run > due, 'nextRun moved on');
    for (const x of [inFlight, notYet])
      await app.inject({
        method: 'DELETE',
        url: '/api/scheduled-tasks',
        headers: owner.headers,
        payload: { taskId: x.id },
      });
  },
);
