import t from 'tap';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { systemDb } from '@agentyard/testing';
import { createQueues, QUEUES, type Job } from '@agentyard/queue';
import { build, startWorkers } from './helper.ts';
import { startHooksReceiver } from './hooks-receiver.ts';
import { userWithAgent } from './agent-rows.ts';

// End to end: the real scheduler app, BullMQ job schedulers in Redis, the real worker, and a real
// HTTP server standing in for the agent's hooks. Every-second (6-field) crons keep it quick.
t.setTimeout(120_000);
const env = { QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-delivery-${randomBytes(3).toString('hex')}`, SCHEDULER_RETRY_DELAY_MS: '100' };
const token = randomBytes(24).toString('base64url');
const receiver = await startHooksReceiver(token);
t.teardown(() => receiver.close());
const app = await build(t, env);
const workers = await startWorkers(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
t.teardown(async () => {
  await queues.get(QUEUES.scheduledPrompts).obliterate({ force: true });
  await queues.close();
});
const owner = await userWithAgent(receiver.url, token);

async function createTask(name: string, prompt: string, cronSchedule = '* * * * * *') {
  const res = await app.inject({ method: 'POST', url: '/api/scheduled-tasks', headers: owner.headers, payload: { name, cronSchedule, prompt, agentId: owner.agentId } });
  t.equal(res.statusCode, 201);
  return res.json() as { id: string };
}
const callsFor = (taskId: string) => receiver.calls.filter((c) => c.body.sessionKey === `scheduled:${taskId}`);
const task = (id: string) => systemDb().selectFrom('scheduled_tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

t.test('a scheduled prompt reaches the agent\'s hooks with its token, and lastRun/nextRun move on', async (t) => {
  const created = await createTask('morning brief', 'Summarise the overnight news');
  const call = await receiver.next((c) => c.body.sessionKey === `scheduled:${created.id}` && c.status === 200);
  t.equal(call.path, '/hooks/agent');
  t.equal(call.authorization, `Bearer ${token}`);
  t.match(call.body, { message: 'Summarise the overnight news', name: 'morning brief', timeoutSeconds: 30 });
  await once(workers.prompts, 'completed');
  const row = await task(created.id);
  t.ok(row.last_run, 'lastRun recorded');
  t.ok(row.next_run && row.next_run.getTime() > row.last_run!.getTime(), 'nextRun after lastRun');
  const listed = (await app.inject({ method: 'GET', url: '/api/scheduled-tasks', headers: owner.headers })).json();
  t.match(listed.tasks.find((x: { id: string }) => x.id === created.id), { lastRun: String, nextRun: String });
  await app.inject({ method: 'DELETE', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId: created.id } });
});

t.test('a failed delivery is recorded, not reported as success, and retried with backoff until delivered', async (t) => {
  receiver.failNext(2);
  const created = await createTask('retried', 'Try again');
  const [failedJob] = await once(workers.prompts, 'failed') as [Job];
  const afterFailure = await task(created.id);
  t.match(afterFailure.last_error, /answered 500/, 'the failure is recorded on the task');
  t.ok(afterFailure.failed_attempts >= 1);
  t.equal(afterFailure.last_run, null, 'a failed delivery is not a run');
  const delivered = await new Promise<Job>((resolve) => {
    const onDone = (job: Job) => { if (job.id === failedJob.id) { workers.prompts.off('completed', onDone); resolve(job); } };
    workers.prompts.on('completed', onDone);
  });
  t.ok(delivered.attemptsMade >= 1, 'the same firing was delivered on a later attempt');
  t.ok(callsFor(created.id).filter((c) => c.status === 500).length >= 1);
  const row = await task(created.id);
  t.ok(row.last_run, 'lastRun set once delivered');
  t.equal(row.last_error, null);
  await app.inject({ method: 'DELETE', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId: created.id } });
});

t.test('a disabled or deleted task never fires again, while others keep firing', async (t) => {
  const paused = await createTask('paused', 'Pause me');
  const removed = await createTask('removed', 'Delete me');
  const witness = await createTask('witness', 'Keep going');
  await receiver.next((c) => c.body.sessionKey === `scheduled:${paused.id}` && c.status === 200);
  await receiver.next((c) => c.body.sessionKey === `scheduled:${removed.id}` && c.status === 200);

  const disable = await app.inject({ method: 'PUT', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId: paused.id, enabled: false } });
  t.match(disable.json(), { enabled: false, nextRun: null });
  const del = await app.inject({ method: 'DELETE', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId: removed.id } });
  t.same(del.json(), { success: true, taskId: removed.id });
  const prompts = queues.get(QUEUES.scheduledPrompts);
  t.notOk(await prompts.getJobScheduler(paused.id), 'the disabled task\'s job scheduler is gone');
  t.notOk(await prompts.getJobScheduler(removed.id), 'the deleted task\'s job scheduler is gone');

  // A delivery already under way when the change landed may still arrive; let two witness firings pass.
  for (let i = 0; i < 2; i++) await receiver.next((c) => c.body.sessionKey === `scheduled:${witness.id}` && c.status === 200);
  const before = { paused: callsFor(paused.id).length, removed: callsFor(removed.id).length };
  for (let i = 0; i < 3; i++) await receiver.next((c) => c.body.sessionKey === `scheduled:${witness.id}` && c.status === 200);
  t.same({ paused: callsFor(paused.id).length, removed: callsFor(removed.id).length }, before, 'no delivery over three more seconds of firings');

  const enable = await app.inject({ method: 'PUT', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId: paused.id, enabled: true } });
  t.equal(enable.json().enabled, true);
  await receiver.next((c) => c.body.sessionKey === `scheduled:${paused.id}` && c.status === 200);
  t.pass('re-enabled task fires again');
  for (const id of [paused.id, witness.id]) await app.inject({ method: 'DELETE', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId: id } });
});

t.test('a restarted worker puts back a lost job scheduler, drops a stale one, and delivers each firing once', async (t) => {
  const kept = await createTask('kept', 'Survive restarts');
  const prompts = queues.get(QUEUES.scheduledPrompts);
  await workers.prompts.close();
  await prompts.removeJobScheduler(kept.id); // lost, as if Redis was restored from an old snapshot
  await prompts.upsertJobScheduler('00000000-0000-4000-8000-000000000000', { pattern: '* * * * * *' }, { name: 'scheduled-prompt', data: { taskId: '00000000-0000-4000-8000-000000000000' } });
  const restarted = await startWorkers(t, env);
  t.ok(await prompts.getJobScheduler(kept.id), 'scheduler restored from the task row');
  t.notOk(await prompts.getJobScheduler('00000000-0000-4000-8000-000000000000'), 'scheduler without a task removed');
  for (let i = 0; i < 3; i++) await once(restarted.prompts, 'completed');
  const delivered = callsFor(kept.id).filter((c) => c.status === 200).map((c) => Math.floor(c.at / 1000));
  t.ok(delivered.length >= 1);
  const row = await task(kept.id);
  t.ok(row.last_delivered_due, 'each delivered firing is recorded by its due time, so a repeat of it is skipped');
  await app.inject({ method: 'DELETE', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId: kept.id } });
});
