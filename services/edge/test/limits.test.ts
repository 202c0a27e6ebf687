import { Readable } from 'node:stream';
import { Redis } from 'ioredis';
import t from 'tap';
import { buildEdge, startEchoService } from './helper.ts';

t.test('bodies over 1 MB are refused with 413 before reaching a service', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream);
  const big = JSON.stringify({ blob: 'x'.repeat(1024 * 1024) });
  const res = await edge.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: big });
  t.equal(res.statusCode, 413);
  t.match(res.json(), { error: /too large/ });
  const fine = await edge.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: { blob: 'x'.repeat(1000) } });
  t.equal(fine.statusCode, 200);
  t.equal(fine.json().body.blob.length, 1000, 'the body reaches the service intact');
});

t.test('a chunked body (no Content-Length) over the limit is refused by the edge with 413 too', async (t) => {
  const upstream = await startEchoService(t);
  // Under the echo service's own 1 MB limit, so only the edge can refuse it.
  const edge = await buildEdge(t, 'web', upstream, { BODY_LIMIT_BYTES: String(256 * 1024) });
  const chunks = Array.from({ length: 8 }, () => Buffer.alloc(64 * 1024, 'x'));
  // A stream payload goes out without a Content-Length, so the onRequest length check cannot catch it.
  const res = await edge.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'text/plain' }, payload: Readable.from(chunks) });
  t.equal(res.statusCode, 413);
  t.match(res.json(), { error: /too large/ });
});

t.test('a body is forwarded byte for byte, whatever its type', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream);
  const text = 'héllo wörld, “quoted” — {"not": json}\n';
  const plain = await edge.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'text/plain; charset=utf-8' }, payload: text });
  t.equal(plain.statusCode, 200);
  t.equal(plain.json().body, text, 'text arrives unchanged');
  t.equal(plain.json().headers['content-type'], 'text/plain; charset=utf-8');
  t.equal(plain.json().headers['content-length'], String(Buffer.byteLength(text)));
  const json = '{ "spaced" : [1, 2,3] }';
  const sent = await edge.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: json });
  t.same(sent.json().body, { spaced: [1, 2, 3] }, 'JSON reaches the service as sent, not re-encoded');
  t.equal(sent.json().headers['content-length'], String(Buffer.byteLength(json)));
  const empty = await edge.inject({ method: 'POST', url: '/echo' });
  t.equal(empty.statusCode, 200, 'a POST without a body still goes through');
  t.equal(empty.json().body, null);
});

t.test('rate limits: RateLimit-* headers, no X-RateLimit-*, 429 with the scope message', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream, { RATE_LIMITS: 'web-register=2', QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}` });
  const register = () => edge.inject({ method: 'POST', url: '/api/register', payload: {} });
  const first = await register();
  t.equal(first.statusCode, 200);
  t.equal(first.headers['ratelimit-limit'], '2');
  t.equal(first.headers['ratelimit-remaining'], '1');
  t.ok(Number(first.headers['ratelimit-reset']) > 0 && Number(first.headers['ratelimit-reset']) <= 3600, 'reset in seconds');
  t.notOk(Object.keys(first.headers).some((h) => h.startsWith('x-ratelimit')), 'no X-RateLimit-* headers');
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
  const edge = await buildEdge(t, 'backend', upstream, { RATE_LIMITS: 'backend-ai=1,backend-api=5', QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-b` });
  const auth = { authorization: `Bearer ${process.env.INTERNAL_API_KEY}` };
  const ai = await edge.inject({ method: 'GET', url: '/api/ai/models', headers: auth });
  t.equal(ai.statusCode, 200);
  t.equal(ai.headers['ratelimit-limit'], '1');
  const limited = await edge.inject({ method: 'GET', url: '/api/ai/models', headers: auth });
  t.equal(limited.statusCode, 429);
  t.same(limited.json(), { error: 'AI rate limit exceeded.' });
});

t.test('the scopes of a request are counted in Redis with one script call naming every scope', async (t) => {
  const upstream = await startEchoService(t);
  const prefix = `${process.env.QUEUE_PREFIX}-${Date.now()}-one-call`;
  const edge = await buildEdge(t, 'backend', upstream, { RATE_LIMITS: 'backend-ai=5,backend-api=50', QUEUE_PREFIX: prefix });
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const monitor = await client.monitor(); // a connection of its own
  t.teardown(() => { monitor.disconnect(); client.disconnect(); });
  const calls: string[][] = [];
  let counted: () => void = () => {};
  monitor.on('monitor', (_time: string, args: string[]) => {
    // MONITOR also shows the commands a script runs; only the calls from the edge count here.
    if (!/^eval(sha)?$/i.test(args[0]!) || !args.some((arg) => arg.startsWith(prefix))) return;
    calls.push(args);
    counted();
  });
  const auth = { authorization: `Bearer ${process.env.INTERNAL_API_KEY}` };
  for (let round = 1; round <= 2; round++) {
    const seen = new Promise<void>((resolve) => { counted = resolve; });
    const res = await edge.inject({ method: 'GET', url: '/api/ai/models', headers: auth });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['ratelimit-remaining'], String(5 - round), 'the stricter scope reports its count');
    await seen;
  }
  t.equal(calls.length, 2, 'one Redis command per request');
  for (const args of calls) {
    t.equal(args[2], '2', 'two keys');
    t.same(args.slice(3, 5).map((key) => key.slice(prefix.length).split(':')[2]), ['backend-api', 'backend-ai']);
  }
});
