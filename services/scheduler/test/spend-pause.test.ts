import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { spendExhaustedSetKey } from '@agentyard/proto-schemas';
import { createQueues, QUEUES, type Job } from '@agentyard/queue';
import { CRON_FIRING_JOB, HEARTBEAT_JOB, PROMPT_BATCH_JOB } from '../src/domain/timers.ts';
import { PAUSED_MESSAGE } from '../src/domain/spend-pause.ts';
import { build, startWorkers } from './helper.ts';
import { startHooksReceiver } from './support/hooks-receiver.ts';
import { userWithAgent } from './support/agent-rows.ts';

// The batch delivers every task due at a time: other files' tasks would be delivered here too.
await useOwnDatabase(t);

// The AI gateway puts a user whose allowance and credits are spent in a Redis set and takes them
// out when credits arrive; the scheduler's workers skip that user's prompts and heartbeats meanwhile.
t.setTimeout(120_000);
// Fired by hand, one firing at a time (never by the clock during the test), on an expression no other
// file uses: a firing claims every task of the run's database with its expression.
const YEARLY = '40 5 4 1 *';
const env = { QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-spend-pause-${randomBytes(3).toString('hex')}` };
const token = randomBytes(24).toString('base64url');
const receiver = await startHooksReceiver(token);
t.teardown(() => receiver.close());
const app = await build(t, env);
const workers = await startWorkers(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
const redis = new Redis(process.env.REDIS_URL!);
t.teardown(async () => {
  await queues.get(QUEUES.scheduledPrompts).obliterate({ force: true });
  await queues.get(QUEUES.heartbeats).obliterate({ force: true });
  await queues.close();
  redis.disconnect();
});
const owner = await userWithAgent(receiver.url, token);
const exhausted = spendExhaustedSetKey(env.QUEUE_PREFIX);
// The workers reconcile every expression of the run's database, so jobs of other files' tasks may
// complete here too: each wait takes only the job it is about.
const finished = (
  worker: {
    on(event: 'completed', f: (job: Job) => void): unknown;
    off(event: 'completed', f: (job: Job) => void): unknown;
  },
  ours: (job: Job) => boolean,
) =>
  new Promise<Job>((resolve) => {
    const onDone = (job: Job) => {
      if (ours(job)) {
        worker.off('completed', onDone);
        resolve(job);
      }
    };
    worker.on('completed', onDone);
  });

t.test(
  "an exhausted user's scheduled prompts are skipped (recorded as paused) and resume once credits take them out of the set",
  async (t) => {
    const prompts = queues.get(QUEUES.scheduledPrompts);
    const task = async (id: string) =>
      systemDb().selectFrom('scheduled_tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    /** Fires the task's next firing by hand and answers its batch once done. */
    const fire = async (taskId: string) => {
      const due = (await task(taskId)).next_run!;
      const batch = finished(
        workers.prompts,
        (job) => job.name === PROMPT_BATCH_JOB && job.data.cronSchedule === YEARLY && job.data.due === due.getTime(),
      );
      await prompts.add(
        CRON_FIRING_JOB,
        { cronSchedule: YEARLY },
        { prevMillis: due.getTime(), jobId: `by-hand-${taskId}-${due.getTime()}` },
      );
      return batch;
    };
    await redis.sadd(exhausted, owner.userId);
    const res = await app.inject({
      method: 'POST',
      url: '/api/scheduled-tasks',
      headers: owner.headers,
      payload: { name: 'paused', cronSchedule: YEARLY, prompt: 'Hello', agentId: owner.agentId },
    });
    t.equal(res.statusCode, 201);
    const taskId = res.json().id as string;
    t.same((await fire(taskId)).returnvalue, { delivered: 0, failed: 1 });
    const row = await task(taskId);
    t.equal(row.last_error, PAUSED_MESSAGE, 'the task says why it did not run');
    t.equal(row.last_run, null);
    t.equal(
      receiver.calls.filter((c) => c.body.sessionKey === `scheduled:${taskId}`).length,
      0,
      'the agent got nothing',
    );

    await redis.srem(exhausted, owner.userId);
    const delivered = receiver.next((c) => c.body.sessionKey === `scheduled:${taskId}` && c.status === 200);
    t.same((await fire(taskId)).returnvalue, { delivered: 1, failed: 0 });
    t.equal((await delivered).body.message, 'Hello', 'delivered again once the user is out of the set');
    t.equal((await task(taskId)).last_error, null);
    await app.inject({ method: 'DELETE', url: '/api/scheduled-tasks', headers: owner.headers, payload: { taskId } });
  },
);

t.test("an exhausted user's heartbeats are skipped, then wake the agent again", async (t) => {
  const beats = queues.get(QUEUES.heartbeats);
  await systemDb()
    .insertInto('heartbeats')
    .values({ user_id: owner.userId, agent_ref: owner.agentId, agent_id: owner.agentId, enabled: true })
    .execute();
  await redis.sadd(exhausted, owner.userId);
  const skipped = finished(workers.heartbeats, (job) => job.name === HEARTBEAT_JOB && job.data.userId === owner.userId);
  await beats.add(HEARTBEAT_JOB, { userId: owner.userId, agentRef: owner.agentId });
  const job = await skipped;
  t.equal(job.returnvalue, 'skipped-paused');
  t.equal(receiver.calls.filter((c) => c.path === '/hooks/wake').length, 0);

  await redis.srem(exhausted, owner.userId);
  await beats.add(HEARTBEAT_JOB, { userId: owner.userId, agentRef: owner.agentId });
  const wake = await receiver.next((c) => c.path === '/hooks/wake');
  t.equal(wake.status, 200);
});
