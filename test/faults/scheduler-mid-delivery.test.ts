import t from 'tap';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { parseKeyring } from '@agentyard/crypto';
import { createSystemDb } from '@agentyard/db/system';
import { createQueues, QUEUES } from '@agentyard/queue';
import {
  migratedDatabase,
  seedMinuteTasks,
  startHooksStandIn,
  startPrivatePostgres,
  startPrivateRedis,
} from '@agentyard/testing';
import { NOT_SENT_AGAIN } from '../../services/scheduler/src/domain/run-records.ts';
import { runNowJob, scheduleOneShot } from '../../services/scheduler/src/domain/timers.ts';
import { schedulerWorkerEnv, startSchedulerWorker } from './scheduler-worker.ts';
import { killWorkers } from './worker-process.ts';

// Issue 31, "nothing twice", for the runs that are not a cron firing's: a one-shot task and a Run now
// each reach their agent, whose hooks take the prompt and do not answer yet, and the scheduler worker
// delivering them is killed (SIGKILL) right then. Another worker takes the jobs over once BullMQ sees
// them stalled. The agent may have the prompts, so neither is sent again: each run ends failed, "not
// sent again", the one-shot task switched off, and each agent got its prompt exactly once.
// PostgreSQL and Redis are private to this file: its worker reconciles every task in the database.
t.setTimeout(300_000);

const postgres = await startPrivatePostgres();
t.teardown(() => postgres.stop());
const redis = await startPrivateRedis();
t.teardown(() => redis.stop());
const urls = await migratedDatabase(postgres.adminUrl, 'agentyard_mid_delivery');
const hooksToken = randomBytes(24).toString('base64url');
const agents = await startHooksStandIn({ token: hooksToken, hold: true });
t.teardown(() => agents.close());
const db = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2, allowExitOnIdle: true });
t.teardown(() => db.destroy());
const prefix = `mid-delivery-${randomBytes(4).toString('hex')}`;
const queues = createQueues({ redisUrl: redis.url, prefix });
t.teardown(() => queues.close());
const encryptionKeys = `f1:${randomBytes(32).toString('base64')}`;
const policy = { attempts: 5, retryDelayMs: 1000 };

const workerEnv = schedulerWorkerEnv({
  urls,
  redisUrl: redis.url,
  prefix,
  encryptionKeys,
  env: { SCHEDULER_RETRY_DELAY_MS: String(policy.retryDelayMs), SCHEDULER_DELIVERY_ATTEMPTS: String(policy.attempts) },
});
const workers: ChildProcess[] = [];
const startWorker = async () => {
  const child = await startSchedulerWorker(workerEnv, queues);
  workers.push(child);
  return child;
};
t.teardown(async () => {
  await killWorkers(workers);
});

t.test('a one-shot and a Run now whose worker is killed mid-delivery are not sent again', async (t) => {
  // Two tasks of one agent: one becomes a one-shot, the other a yearly task that is run by hand.
  const {
    userId,
    taskIds: [oneShot, byHand],
  } = await seedMinuteTasks(db, {
    tasks: 2,
    agents: 1,
    gatewayUrl: agents.url,
    hooksToken,
    keyring: parseKeyring(encryptionKeys),
    firstDue: new Date(Date.now() + 3_600_000),
  });
  const runAt = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
  await db
    .updateTable('scheduled_tasks')
    .set({ cron_schedule: null, run_at: runAt, next_run: runAt })
    .where('id', '=', oneShot!)
    .execute();
  await db
    .updateTable('scheduled_tasks')
    .set({ cron_schedule: '0 0 1 1 *', next_run: new Date('2099-01-01T00:00:00Z') })
    .where('id', '=', byHand!)
    .execute();
  const first = await startWorker();

  const since = Date.now();
  const prompts = queues.get(QUEUES.scheduledPrompts);
  await scheduleOneShot(prompts, oneShot!, runAt, policy);
  const manual = await db
    .insertInto('scheduled_task_runs')
    .values({ task_id: byHand!, user_id: userId, due_at: new Date(), manual: true, status: 'pending' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const job = runNowJob(manual.id, policy);
  await prompts.add(job.name, job.data, job.opts);

  // Both prompts are with the agent, unanswered: the worker is mid-delivery of each. It dies.
  await agents.received(2, since);
  const exited = once(first, 'exit');
  first.kill('SIGKILL');
  await exited;
  const killedAt = Date.now();
  await startWorker();

  const settled = async () =>
    db
      .selectFrom('scheduled_task_runs')
      .select(['task_id', 'status', 'error'])
      .where('task_id', 'in', [oneShot!, byHand!])
      .where('status', '<>', 'pending')
      .execute();
  let runs = await settled();
  while (runs.length < 2 && Date.now() - killedAt < 240_000) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    runs = await settled();
  }
  t.comment(`killed mid-delivery → both runs settled by the next worker: ${Date.now() - killedAt} ms`);
  const runOf = (taskId: string) => runs.find((r) => r.task_id === taskId);
  t.match(runOf(oneShot!), { status: /^failed$/, error: NOT_SENT_AGAIN }, 'the one-shot run: failed, not sent again');
  t.match(runOf(byHand!), { status: /^failed$/, error: NOT_SENT_AGAIN }, 'the Run now: failed, not sent again');
  const task = await db
    .selectFrom('scheduled_tasks')
    .select(['enabled', 'last_status'])
    .where('id', '=', oneShot!)
    .executeTakeFirstOrThrow();
  t.same(task, { enabled: false, last_status: 'failed' }, 'the one-shot task is done, switched off');
  const got = (taskId: string) => agents.deliveries.filter((d) => d.taskId === taskId).length;
  t.equal(got(oneShot!), 1, 'the one-shot prompt reached its agent once');
  t.equal(got(byHand!), 1, 'the Run now prompt reached its agent once');
  t.equal(
    await db
      .selectFrom('scheduled_task_runs')
      .select('id')
      .where('task_id', 'in', [oneShot!, byHand!])
      .execute()
      .then((rows) => rows.length),
    2,
    'one run each',
  );
});
