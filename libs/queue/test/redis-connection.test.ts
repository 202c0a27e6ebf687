import t from 'tap';
import { once } from 'node:events';
import { consoleErrors, startRelay } from '@agentyard/testing';
import { redisConnection } from '../src/index.ts';

// Redis going away mid-life: each refused reconnect is a log line at the level asked for, never
// ioredis' "[ioredis] Unhandled error event" on stderr (what it writes for a connection without a listener).

t.test('a connection whose Redis goes away logs its errors, naming what it is for', async (t) => {
  const written = consoleErrors(t);
  const relay = await startRelay(process.env.REDIS_URL!);
  const lines: { level: string; obj: { err: { message: string } }; msg: string }[] = [];
  const logged = (level: string) => (obj: object, msg: string) =>
    void lines.push({ level, obj: obj as { err: { message: string } }, msg });
  const redis = redisConnection(
    relay.url,
    { maxRetriesPerRequest: 1, retryStrategy: () => 10 },
    { purpose: 'test counters', log: { warn: logged('warn'), error: logged('error') }, level: 'warn' },
  );
  t.teardown(() => redis.disconnect());
  await once(redis, 'ready');
  t.equal(await redis.ping(), 'PONG');

  await relay.goDown();
  await once(redis, 'error');
  t.ok(lines.length >= 1, 'the refused reconnect is logged');
  t.match(lines[0], {
    level: /^warn$/,
    msg: 'test counters connection error',
    obj: { err: { message: /ECONN(REFUSED|RESET)|closed/ } },
  });
  t.same(written, [], 'nothing written to stderr by ioredis');
});

t.test('without a log the errors are still handled: nothing reaches stderr', async (t) => {
  const written = consoleErrors(t);
  const redis = redisConnection(
    'redis://127.0.0.1:9',
    { lazyConnect: true, retryStrategy: () => null },
    { purpose: 'unlogged' },
  );
  t.teardown(() => redis.disconnect());
  await t.rejects(redis.connect());
  t.same(written, []);
});
