import { createConnection } from 'node:net';
import { Readable } from 'node:stream';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { windowLeases } from '../src/plugins/rate-limits.ts';
import { startRelay } from '@agentyard/testing';
import { buildEdge, startEchoService } from './helper.ts';

t.test('bodies over 1 MB are refused with 413 before reaching a service', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream);
  const big = JSON.stringify({ blob: 'x'.repeat(1024 * 1024) });
  const res = await edge.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'application/json' },
    payload: big,
  });
  t.equal(res.statusCode, 413);
  t.match(res.json(), { error: /too large/ });
  const fine = await edge.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'application/json' },
    payload: { blob: 'x'.repeat(1000) },
  });
  t.equal(fine.statusCode, 200);
  t.equal(fine.json().body.blob.length, 1000, 'the body reaches the service intact');
});

t.test('a chunked body (no Content-Length) over the limit is refused by the edge with 413 too', async (t) => {
  const upstream = await startEchoService(t);
  // Under the echo service's own 1 MB limit, so only the edge can refuse it.
  const edge = await buildEdge(t, 'web', upstream, { BODY_LIMIT_BYTES: String(256 * 1024) });
  const chunks = Array.from({ length: 8 }, () => Buffer.alloc(64 * 1024, 'x'));
  // A stream payload goes out without a Content-Length, so the onRequest length check cannot catch it.
  const res = await edge.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'text/plain' },
    payload: Readable.from(chunks),
  });
  t.equal(res.statusCode, 413);
  t.match(res.json(), { error: /too large/ });
});

t.test('a body is forwarded byte for byte, whatever its type', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream);
  const text = 'héllo wörld, “quoted” — {"not": json}\n';
  const plain = await edge.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    payload: text,
  });
  t.equal(plain.statusCode, 200);
  t.equal(plain.json().body, text, 'text arrives unchanged');
  t.equal(plain.json().headers['content-type'], 'text/plain; charset=utf-8');
  t.equal(plain.json().headers['content-length'], String(Buffer.byteLength(text)));
  const json = '{ "spaced" : [1, 2,3] }';
  const sent = await edge.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'application/json' },
    payload: json,
  });
  t.same(sent.json().body, { spaced: [1, 2, 3] }, 'JSON reaches the service as sent, not re-encoded');
  t.equal(sent.json().headers['content-length'], String(Buffer.byteLength(json)));
  const empty = await edge.inject({ method: 'POST', url: '/echo' });
  t.equal(empty.statusCode, 200, 'a POST without a body still goes through');
  t.equal(empty.json().body, null);
});

t.test('rate limits: RateLimit-* headers, no X-RateLimit-*, 429 with the scope message', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream, {
    RATE_LIMITS: 'web-register=2',
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}`,
  });
  const register = () => edge.inject({ method: 'POST', url: '/api/register', payload: {} });
  const first = await register();
  t.equal(first.statusCode, 200);
  t.equal(first.headers['ratelimit-limit'], '2');
  t.equal(first.headers['ratelimit-remaining'], '1');
  t.ok(
    Number(first.headers['ratelimit-reset']) > 0 && Number(first.headers['ratelimit-reset']) <= 3600,
    'reset in seconds',
  );
  t.notOk(
    Object.keys(first.headers).some((h) => h.startsWith('x-ratelimit')),
    'no X-RateLimit-* headers',
  );
  t.equal((await register()).statusCode, 200);
  const limited = await register();
  t.equal(limited.statusCode, 429);
  t.same(limited.json(), { error: 'Too many requests' });
  const other = await edge.inject({ method: 'GET', url: '/echo' });
  t.equal(other.statusCode, 200, 'other routes are not limited by that scope');
  t.notOk(other.headers['ratelimit-limit']);
});

t.test('backend: the AI scope counts on top of the global one and reports the stricter', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'backend', upstream, {
    RATE_LIMITS: 'backend-ai=1,backend-api=5',
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-b`,
  });
  const auth = { authorization: `Bearer ${process.env.INTERNAL_API_KEY}` };
  const ai = await edge.inject({ method: 'GET', url: '/api/ai/models', headers: auth });
  t.equal(ai.statusCode, 200);
  t.equal(ai.headers['ratelimit-limit'], '1');
  const limited = await edge.inject({ method: 'GET', url: '/api/ai/models', headers: auth });
  t.equal(limited.statusCode, 429);
  t.same(limited.json(), { error: 'AI rate limit exceeded.' });
});

/** The lease scripts the edge sends to Redis for keys under `prefix`, seen through MONITOR; `settled()` resolves once every command sent before it has been seen. */
async function watchLeases(t: Test, prefix: string) {
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const calls: string[][] = [];
  const marks = new Map<string, () => void>();
  // MONITOR on a plain socket: ioredis's monitor mode can take a line that arrives with MONITOR's
  // own OK for a command reply and fail ("Command queue state error") when other clients are busy.
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const monitor = createConnection({ host: url.hostname, port: Number(url.port || 6379) });
  t.teardown(() => {
    monitor.destroy();
    client.disconnect();
  });
  let pending = '';
  const started = Promise.withResolvers<void>();
  monitor.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\r\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (line === '+OK') {
        started.resolve();
        continue;
      }
      if (!line.startsWith('+')) continue;
      const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
      if (args[0]?.toLowerCase() === 'echo') marks.get(args[1]!)?.();
      // MONITOR also shows the commands a script runs; only the calls from the edge count here.
      if (/^eval(sha)?$/i.test(args[0]!) && args.some((arg) => arg.startsWith(prefix))) calls.push(args);
    }
  });
  monitor.write('MONITOR\r\n');
  await started.promise;
  const settled = async () => {
    const mark = `${prefix}-mark-${marks.size}`;
    const seen = new Promise<void>((resolve) => marks.set(mark, resolve));
    await client.echo(mark);
    await seen;
  };
  return {
    calls,
    settled,
    count: async (scope: string) => Number(await client.get(`${prefix}:ratelimit:${scope}:127.0.0.1`)),
  };
}

const backendAuth = { authorization: `Bearer ${process.env.INTERNAL_API_KEY}` };

t.test(
  'far under its limits a client is counted from a lease: one Redis call for many requests, exact counts',
  async (t) => {
    const upstream = await startEchoService(t);
    const prefix = `${process.env.QUEUE_PREFIX}-${Date.now()}-lease`;
    const edge = await buildEdge(t, 'backend', upstream, {
      RATE_LIMITS: 'backend-ai=1000,backend-api=2000',
      QUEUE_PREFIX: prefix,
    });
    const redis = await watchLeases(t, prefix);
    for (let n = 1; n <= 20; n++) {
      const res = await edge.inject({ method: 'GET', url: '/api/ai/models', headers: backendAuth });
      t.equal(res.statusCode, 200);
      if (res.headers['ratelimit-remaining'] !== String(1000 - n))
        t.fail(`request ${n}: remaining ${res.headers['ratelimit-remaining']}`);
    }
    await redis.settled();
    t.equal(redis.calls.length, 1, 'one script call for 20 requests');
    t.equal(redis.calls[0]![2], '2', 'naming both scopes');
    t.same(
      redis.calls[0]!.slice(3, 5).map((key) => key.slice(prefix.length).split(':')[2]),
      ['backend-api', 'backend-ai'],
    );
    t.equal(
      await redis.count('backend-ai'),
      65,
      'Redis holds the units leased (1 needed + 64), never fewer than were counted',
    );
    t.equal(await redis.count('backend-api'), 65);
  },
);

t.test(
  'edge processes sharing Redis never admit more than the limit together; a spent window is refused without Redis',
  async (t) => {
    const upstream = await startEchoService(t);
    const prefix = `${process.env.QUEUE_PREFIX}-${Date.now()}-shared`;
    const env = { RATE_LIMITS: 'backend-ai=20,backend-api=1000', QUEUE_PREFIX: prefix };
    const edges = [await buildEdge(t, 'backend', upstream, env), await buildEdge(t, 'backend', upstream, env)];
    const redis = await watchLeases(t, prefix);
    const codes: number[] = [];
    for (let n = 0; n < 40; n++)
      codes.push(
        (await edges[n % 2]!.inject({ method: 'GET', url: '/api/ai/models', headers: backendAuth })).statusCode,
      );
    t.same(
      codes,
      [...Array(20).fill(200), ...Array(20).fill(429)],
      'taking turns, the two admit exactly the limit between them',
    );
    await redis.settled();
    // The edge that leased the 20th unit knew the window was spent; the other learnt it from one more call.
    t.equal(await redis.count('backend-ai'), 21, 'one refusal counted in Redis, the other 19 from spent leases');
    const calls = redis.calls.length;
    const refused = await edges[0]!.inject({ method: 'GET', url: '/api/ai/models', headers: backendAuth });
    t.equal(refused.statusCode, 429);
    t.same(refused.json(), { error: 'AI rate limit exceeded.' });
    t.equal(refused.headers['ratelimit-remaining'], '0');
    t.ok(Number(refused.headers['retry-after']) > 0);
    await redis.settled();
    t.equal(redis.calls.length, calls, 'no Redis call for a refusal in a spent window');

    const concurrentPrefix = `${prefix}-concurrent`;
    const concurrentEnv = { ...env, QUEUE_PREFIX: concurrentPrefix };
    const racing = [
      await buildEdge(t, 'backend', upstream, concurrentEnv),
      await buildEdge(t, 'backend', upstream, concurrentEnv),
    ];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, n) =>
        racing[n % 2]!.inject({ method: 'GET', url: '/api/ai/models', headers: backendAuth }),
      ),
    );
    const admitted = answers.filter((res) => res.statusCode === 200).length;
    t.ok(admitted <= 20, `at once, never more than the limit (${admitted})`);
    // Only a process's last lease can hold units it never used, an eighth of the headroom at most (2 of 19).
    t.ok(admitted >= 16, `and at most 2 units per process go unused (${admitted})`);
  },
);

t.test('a lease ends with its window in Redis: the next window starts from one', async (t) => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  t.teardown(() => redis.disconnect());
  const prefix = `${process.env.QUEUE_PREFIX}-${Date.now()}-window:`;
  const store = new (windowLeases(redis, prefix))();
  const count = () =>
    new Promise<{ current: number; ttl: number }>((resolve, reject) =>
      store.incr('k', (error, result) => (error ? reject(error) : resolve(result!)), 1000, 100),
    );
  const first = await count();
  t.equal(first.current, 1);
  t.ok(first.ttl > 0 && first.ttl <= 1000, "the TTL is the window's");
  t.equal((await count()).current, 2);
  t.equal(Number(await redis.get(`${prefix}k`)), 1 + 12, 'one lease: 1 needed and an eighth of the 99 spare');
  // The window ends in Redis when its key expires: wait that long (a lease never outlives it).
  const left = Math.max(0, 1 + Number(await redis.pttl(`${prefix}k`)));
  await new Promise((resolve) => setTimeout(resolve, left));
  t.equal(await redis.exists(`${prefix}k`), 0);
  t.equal((await count()).current, 1, 'a new window, counted from a new lease');
});

t.test('when Redis fails, every request waiting for a lease hears it, and the next one asks again', async (t) => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 0 });
  t.teardown(() => redis.disconnect());
  const prefix = `${process.env.QUEUE_PREFIX}-${Date.now()}-failing:`;
  const store = new (windowLeases(redis, prefix))();
  const count = () =>
    new Promise<{ current: number; ttl: number }>((resolve, reject) =>
      store.incr('k', (error, result) => (error ? reject(error) : resolve(result!)), 60_000, 100),
    );
  await redis.set(`${prefix}k`, 'not a number'); // the script's INCRBY fails on it
  const failed = await Promise.allSettled([count(), count()]);
  t.same(
    failed.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  await redis.del(`${prefix}k`);
  t.equal((await count()).current, 1, 'counted once Redis answers again');
});

t.test(
  'when Redis stops answering, a request waiting for a lease goes through uncounted after the command timeout',
  async (t) => {
    const upstream = await startEchoService(t);
    const relay = await startRelay(process.env.REDIS_URL!);
    t.teardown(() => relay.goDown());
    const edge = await buildEdge(t, 'web', upstream, {
      REDIS_URL: relay.url,
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-stalled`,
    });
    const counted = await edge.inject({ method: 'POST', url: '/api/register', payload: {} });
    t.equal(counted.statusCode, 200);
    t.equal(counted.headers['ratelimit-remaining'], '9', 'counted while Redis answers');
    relay.stall();
    const started = performance.now();
    // A new client (another address) needs a lease of its own: its request waits on the stalled Redis.
    const res = await edge.inject({ method: 'POST', url: '/api/register', payload: {}, remoteAddress: '127.0.0.9' });
    t.equal(res.statusCode, 200, 'let through');
    t.equal(res.headers['ratelimit-remaining'], '10', 'uncounted: the whole limit remains');
    t.ok(performance.now() - started >= 900, 'after the command timeout, not before');
  },
);
