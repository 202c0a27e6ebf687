import t from 'tap';
import { dependencyStates } from '@agentyard/observability';
import { createQueues } from '../src/queues.ts';

// Readiness asked the moment a process made its queue connection (a probe racing the start): the
// client refuses commands until connected, so the check waits for the connection within its time.
t.test(
  "a queue connection still being made answers readiness once connected, not with the client's refusal",
  async (t) => {
    const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: `${process.env.QUEUE_PREFIX}-readiness` });
    t.teardown(() => queues.close());
    t.same(await dependencyStates(), { redis: 'ok' });
  },
);

t.test('a Redis that does not answer is not ready, with the reason', async (t) => {
  const queues = createQueues({ redisUrl: 'redis://127.0.0.1:9', prefix: 'unreachable' });
  t.teardown(() => queues.close());
  t.match(await dependencyStates(300), { redis: /not connected yet|ECONNREFUSED|timed out/ });
});
