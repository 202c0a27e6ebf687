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
import { cronTimerId, RUN_PURGE_JOB } from '../../services/scheduler/src/domain/timers.ts';
import { schedulerWorkerEnv, startSchedulerWorker } from './scheduler-worker.ts';

// Issue 30, a fault never tried: Redis comes back WITHOUT its data (no append-only file, a new
// volume) under a running scheduler worker. The job schedulers that fire the tasks lived only in
// Redis, so nothing fires again until the worker makes them again. Scheduled prompts fire every
// minute (real cron minutes) from a real scheduler worker process to agents' hooks stand-ins; after
// a minute has been delivered, Redis restarts empty; then the worker must put back the tasks' timer
// and the run purge by itself (the time from Redis's return is printed), and the next minute must be
// delivered to every task, once. PostgreSQL and Redis are this file's own: the worker reconciles
// every task of its database, and the restart must not touch other test files' queues.
t.setTimeout(300_000);

const TASKS = 40;
const MINUTE = 60_000;

const postgres = await startPrivatePostgres();
t.teardown(() => postgres.stop());
const redis = await startPrivateRedis();
t.teardown(() => redis.stop());
const urls = await migratedDatabase(postgres.adminUrl, 'agentyard_redis_lost');
const hooksToken = randomBytes(24).toString('base64url');
const agents = await startHooksStandIn({ token: hooksToken });
t.teardown(() => agents.close());
const db = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2, allowExitOnIdle: true });
t.teardown(() => db.destroy());
const prefix = `redis-lost-${randomBytes(4).toString('hex')}`;
const queues = createQueues({ redisUrl: redis.url, prefix });
t.teardown(() => queues.close());
const encryptionKeys = `f1:${randomBytes(32).toString('base64')}`;
const prompts = queues.get(QUEUES.scheduledPrompts);
const taskTimer = cronTimerId({ cronSchedule: '* * * * *', timezone: 'UTC' });

/** Resolves once every task's run due at `due` is settled; the statuses they settled with. */
async function settled(due: number, deadline: number): Promise<Record<string, number>> {
  for (;;) {
    const rows = await db
      .selectFrom('scheduled_task_runs')
      .select(['status'])
      .where('due_at', '=', new Date(due))
      .where('status', '<>', 'pending')
      .execute();
    if (rows.length === TASKS) {
      const statuses: Record<string, number> = {};
      for (const { status } of rows) statuses[status] = (statuses[status] ?? 0) + 1;
      return statuses;
    }
    if (Date.now() > deadline)
      throw new Error(`${rows.length} of ${TASKS} runs due ${new Date(due).toISOString()} settled`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

t.test(
  'Redis back without its data: the scheduler worker makes its timers again and the next minute is delivered',
  async (t) => {
    // The first due minute leaves the worker time to start and reconcile.
    const firstDue = Math.ceil((Date.now() + 15_000) / MINUTE) * MINUTE;
    const { taskIds } = await seedMinuteTasks(db, {
      tasks: TASKS,
      agents: 8,
      gatewayUrl: agents.url,
      hooksToken,
      keyring: parseKeyring(encryptionKeys),
      firstDue: new Date(firstDue),
    });
    const workerEnv = schedulerWorkerEnv({ urls, redisUrl: redis.url, prefix, encryptionKeys });
    let died: string | undefined;
    const worker: ChildProcess = await startSchedulerWorker(workerEnv, queues, (_child, code, signal) => {
      died = `the scheduler worker exited by itself (${signal ?? code})`;
    });
    t.teardown(async () => {
      if (worker.exitCode !== null || worker.signalCode !== null) return;
      died = undefined;
      const exited = once(worker, 'exit');
      worker.kill('SIGKILL');
      await exited;
    });
    t.ok(await prompts.getJobScheduler(taskTimer), "the tasks' timer is in Redis after the worker's start");

    t.same(
      await settled(firstDue, firstDue + 2 * MINUTE),
      { delivered: TASKS },
      'the first minute is delivered to every task',
    );
    await redis.restart({ losingData: true });
    const back = Date.now();

    // The worker notices Redis's return and reconciles: both job schedulers are back.
    for (;;) {
      // This file's own connection may still be reconnecting: not there yet, then.
      const [tasks, purge] = await Promise.all(
        [taskTimer, RUN_PURGE_JOB].map((id) => prompts.getJobScheduler(id).catch(() => undefined)),
      );
      if (tasks && purge) break;
      if (died) throw new Error(died);
      if (Date.now() - back > MINUTE)
        throw new Error("the scheduler worker did not put its timers back within a minute of Redis's return");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const restoredMs = Date.now() - back;
    t.pass('the worker put the task timer and the run purge back');

    const nextDue = Math.ceil(Date.now() / MINUTE) * MINUTE;
    t.same(
      await settled(nextDue, nextDue + 2 * MINUTE),
      { delivered: TASKS },
      'the next minute is delivered to every task',
    );
    const got = agents.deliveries.filter((d) => d.at >= nextDue);
    t.equal(got.length, TASKS, 'each task reached its agent once in that minute');
    t.same(new Set(got.map((d) => d.taskId)), new Set(taskIds), 'every task, none twice');
    t.notOk(died, 'the worker lived through it');
    console.log(
      `# Redis back without its data: timers made again ${restoredMs} ms after its return; minute ${new Date(nextDue).toISOString()} delivered to ${got.length}/${TASKS} tasks`,
    );
  },
);
