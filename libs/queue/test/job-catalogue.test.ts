import t from 'tap';
import { randomBytes } from 'node:crypto';
import { QueueEvents } from 'bullmq';
import { createQueues, defineJobs, QUEUES, repeatingJobs, startJobWorkers, type Job } from '../src/index.ts';

// Queues of this file's own prefix on the real Redis; the two queue names are any two.
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${process.env.QUEUE_PREFIX ?? 'test'}-catalogue${randomBytes(3).toString('hex')}`;
const quiet = { error() {} };

interface Greeting {
  name: string;
}
interface Sum {
  terms: number[];
}

const catalogue = defineJobs({
  greet: { queue: QUEUES.provisioning, run: async (job: Job<Greeting>) => `hello ${job.data.name}` },
  sum: { queue: QUEUES.provisioning, run: async (job: Job<Sum>) => job.data.terms.reduce((a, b) => a + b, 0) },
  sweep: {
    queue: QUEUES.lifecycle,
    run: async (_job: Job<Record<string, never>>, token) => (token ? 'swept with a lock token' : 'swept'),
    repeat: { everyMs: 60_000, opts: { removeOnComplete: 10 } },
  },
});

t.test('a catalogue runs each job by its name, one worker per queue, unknown names failing for good', async (t) => {
  const queues = createQueues({ redisUrl, prefix });
  const events = new QueueEvents(QUEUES.provisioning, { connection: { url: redisUrl }, prefix });
  const lifecycleEvents = new QueueEvents(QUEUES.lifecycle, { connection: { url: redisUrl }, prefix });
  await Promise.all([events.waitUntilReady(), lifecycleEvents.waitUntilReady()]);
  const workers = startJobWorkers(catalogue, {
    redisUrl,
    prefix,
    log: quiet,
    concurrency: { [QUEUES.provisioning]: 3 },
    bull: { [QUEUES.lifecycle]: { removeOnComplete: { count: 5 } } },
  });
  t.teardown(async () => {
    await workers.close();
    await Promise.all([events.close(), lifecycleEvents.close()]);
    await Promise.all([
      queues.get(QUEUES.provisioning).obliterate({ force: true }),
      queues.get(QUEUES.lifecycle).obliterate({ force: true }),
    ]);
    await queues.close();
  });

  const provisioning = workers.get(QUEUES.provisioning);
  const lifecycle = workers.get(QUEUES.lifecycle);
  t.not(provisioning, lifecycle, 'a worker of its own for each queue');
  t.equal(provisioning.name, QUEUES.provisioning);
  t.equal(lifecycle.name, QUEUES.lifecycle);
  t.equal(provisioning.opts.concurrency, 3, "a queue's concurrency as given");
  t.equal(lifecycle.opts.concurrency, 1, 'one at a time for a queue not given one');
  t.same(lifecycle.opts.removeOnComplete, { count: 5 }, "a queue's BullMQ options as given");
  t.throws(() => workers.get(QUEUES.email), /no job of the catalogue runs on outbound-email/);

  const run = async (queue: 'provisioning' | 'lifecycle', name: string, data: object, attempts = 1) => {
    const job = await queues.get(QUEUES[queue]).add(name, data, { attempts });
    return job.waitUntilFinished(queue === 'provisioning' ? events : lifecycleEvents, 10_000);
  };
  t.equal(await run('provisioning', 'greet', { name: 'Ada' }), 'hello Ada', "each job runs its own name's handler");
  t.equal(await run('provisioning', 'sum', { terms: [1, 2, 3] }), 6);
  t.equal(await run('lifecycle', 'sweep', {}), 'swept with a lock token', 'the handler is handed the lock token');

  const unknown = await queues.get(QUEUES.provisioning).add('shout', {}, { attempts: 3 });
  await t.rejects(unknown.waitUntilFinished(events, 10_000), /^unknown provisioning job shout$/);
  const misplaced = await queues.get(QUEUES.lifecycle).add('greet', { name: 'Ada' }, { attempts: 3 });
  await t.rejects(
    misplaced.waitUntilFinished(lifecycleEvents, 10_000),
    /^unknown agent-lifecycle job greet$/,
    'a job of the catalogue queued on another queue is unknown on this one',
  );
  const inherited = await queues.get(QUEUES.provisioning).add('toString', {}, { attempts: 3 });
  await t.rejects(inherited.waitUntilFinished(events, 10_000), /^unknown provisioning job toString$/);
  for (const [queue, job] of [
    [QUEUES.provisioning, unknown],
    [QUEUES.lifecycle, misplaced],
    [QUEUES.provisioning, inherited],
  ] as const) {
    const failed = await queues.get(queue).getJob(job.id!);
    t.equal(failed?.attemptsMade, 1, `${job.name}: not retried (an UnrecoverableError)`);
  }
});

t.test("the catalogue's repeating jobs", async (t) => {
  t.same(repeatingJobs(catalogue), [
    { queue: QUEUES.lifecycle, name: 'sweep', everyMs: 60_000, opts: { removeOnComplete: 10 } },
  ]);
});
