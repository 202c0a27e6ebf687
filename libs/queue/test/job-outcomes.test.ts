import t from 'tap';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { QueueEvents } from 'bullmq';
import { createQueues, jobOutcomes, QUEUES, startWorker } from '../src/index.ts';

// A queue of this file's own on the real Redis; the provisioning queue's name, any would do.
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${process.env.QUEUE_PREFIX ?? 'test'}-outcomes${randomBytes(3).toString('hex')}`;
const quiet = { error() {} };

t.test('job outcomes: before, during and racing the call', async (t) => {
  const queues = createQueues({ redisUrl, prefix });
  const queue = queues.get(QUEUES.provisioning);
  const events = new QueueEvents(QUEUES.provisioning, { connection: { url: redisUrl }, prefix });
  const worker = startWorker<{ fail?: boolean; n?: number }, string>(
    QUEUES.provisioning,
    async (job) => {
      if (job.data.fail) throw new Error(`it broke (attempt ${job.attemptsMade + 1})`);
      if (job.data.n !== undefined) await delay(job.data.n % 4); // finishing at many moments around the call
      return `done ${job.data.n ?? job.id}`;
    },
    { redisUrl, prefix, concurrency: 16, log: quiet },
  );
  t.teardown(async () => {
    await worker.close();
    await events.close();
    await queue.obliterate({ force: true });
    await queues.close();
  });
  const outcomes = jobOutcomes(queue, events);

  await queue.add('x', {}, { jobId: 'early' });
  await queue.add('x', { fail: true }, { jobId: 'failing', attempts: 3, backoff: { type: 'fixed', delay: 100 } });
  await t.rejects(outcomes.finished('failing', 10_000), /it broke \(attempt 3\)/, "the last attempt's failure rejects");
  t.equal(await outcomes.finished('early', 10_000), 'done early', 'finished before the call: its value');
  await t.rejects(outcomes.finished('never-added', 10_000), /no job never-added/);

  // Called while each job is queued, running or finishing: always the job's own value.
  const ids = Array.from({ length: 60 }, (_, n) => `racing-${n}`);
  const waits = ids.map(async (id, n) => {
    await queue.add('x', { n }, { jobId: id });
    await delay(n % 3);
    return outcomes.finished(id, 20_000);
  });
  t.same(
    await Promise.all(waits),
    ids.map((_, n) => `done ${n}`),
  );

  await worker.pause();
  await queue.add('x', {}, { jobId: 'slow' });
  await t.rejects(outcomes.finished('slow', 50), /did not finish within 50 ms/, 'a timeout rejects');
});
