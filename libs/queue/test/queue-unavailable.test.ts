import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startRelay } from '@agentyard/testing';
import { createQueues, QUEUES, QueueUnavailableError } from '../src/index.ts';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${process.env.QUEUE_PREFIX ?? 'test'}-unavailable${randomBytes(3).toString('hex')}`;
// Straight to Redis: what the relayed connections left in it, removed at the end.
const direct = createQueues({ redisUrl, prefix });
t.teardown(async () => {
  await direct.get(QUEUES.email).obliterate({ force: true });
  await direct.close();
});

t.test(
  'a job queued while Redis is gone fails as QueueUnavailableError (503, a message for the client); other failures pass through',
  async (t) => {
    const relay = await startRelay(redisUrl);
    const queues = createQueues({ redisUrl: relay.url, prefix, log: { error() {} } });
    t.teardown(() => queues.close());

    await queues.add(QUEUES.email, 'first', { n: 1 }, { jobId: 'first' });
    t.ok(await direct.get(QUEUES.email).getJob('first'), 'queued through the relay while Redis is there');
    await t.rejects(
      queues.add(QUEUES.email, 'bad', { n: 0 }, { jobId: '1' }),
      { message: /Custom Id cannot be integers/ },
      'a refused job is not an outage',
    );

    await queues.available();
    await relay.goDown();
    await t.rejects(
      queues.available(),
      QueueUnavailableError,
      'asked at once after Redis went, the queue says so (it asks Redis, not its last news)',
    );
    const failure = await queues.add(QUEUES.email, 'second', { n: 2 }, { jobId: 'second' }).then(
      () => null,
      (error: unknown) => error,
    );
    t.type(failure, QueueUnavailableError);
    t.match(failure, { statusCode: 503, expose: true, message: 'Job queue unavailable, try again shortly' });
    t.notOk(await direct.get(QUEUES.email).getJob('second'), 'nothing was queued');
  },
);

t.test('a job Redis does not answer fails as QueueUnavailableError once the command timeout has passed', async (t) => {
  const relay = await startRelay(redisUrl);
  const queues = createQueues({ redisUrl: relay.url, prefix, log: { error() {} }, commandTimeoutMs: 300 });
  t.teardown(async () => {
    await relay.goDown();
    await queues.close();
  });
  await queues.add(QUEUES.email, 'first', { n: 1 }, { jobId: 'answered' });
  relay.stall();
  await t.rejects(queues.add(QUEUES.email, 'second', { n: 2 }, { jobId: 'unanswered' }), QueueUnavailableError);
});
