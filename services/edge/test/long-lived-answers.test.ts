import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { route, type RouteSpec } from '@agentyard/proto-schemas';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';
import { rateLimitRedis } from '../src/plugins/rate-limits.ts';
import { appDb } from '@agentyard/testing';

/**
 * A service whose `/stream` answers an event stream held open until the client goes, `/short`
 * answers at once, and `/slow` answers only when the test says so.
 */
async function startStreamingService(t: Test) {
  const slow: http.ServerResponse[] = [];
  const received: string[] = [];
  const arrivals = new EventEmitter();
  const server = http.createServer((request, response) => {
    received.push(request.url!);
    arrivals.emit('request', request.url);
    if (request.url === '/upload') return; // read and answered never: the upload stays open
    if (request.url === '/stream') {
      response.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders(); // a HEAD's too
      response.write(': connected\n\n');
    } else if (request.url === '/slow') slow.push(response);
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    received,
    arrivals,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answerSlow: () => {
      for (const response of slow.splice(0)) response.end('{}');
    },
  };
}

const spec = (url: string, longLived = false): RouteSpec =>
  route({
    method: 'GET',
    url,
    service: 'agents',
    surfaces: ['backend'],
    auth: 'service',
    ...(longLived ? { longLived } : {}),
    summary: url,
    schema: { response: {} },
  });
const upload = route({
  method: 'POST',
  url: '/upload',
  service: 'agents',
  surfaces: ['backend'],
  auth: 'service',
  streamedBody: { maxBytes: 1024 },
  summary: 'upload',
  schema: { response: {} },
});
const routes = [spec('/stream', true), spec('/short'), spec('/slow'), upload];

async function startEdge(t: Test, upstream: string, env: Record<string, string>) {
  const config = loadEdgeConfig({ ...process.env, RATE_LIMITS: 'backend-api=10000', ...env });
  const redis = rateLimitRedis(config.REDIS_URL);
  const edge = await buildApp(config, {
    db: appDb(),
    redis,
    health: { current: () => 'healthy' },
    routes,
    upstreamOf: () => upstream,
  });
  await edge.backend.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(async () => {
    await edge.close();
    redis.disconnect();
  });
  return { edge, port: (edge.backend.server.address() as AddressInfo).port };
}

/** A request over a connection of its own, as `userId` with the internal key; resolves with the answer's head (the body may stay open). */
function open(
  port: number,
  path: string,
  userId: string,
  method = 'GET',
): Promise<{ status: number; response: http.IncomingMessage; request: http.ClientRequest; body(): Promise<string> }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      {
        method,
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        timeout: 20_000,
        headers: { authorization: `Bearer ${process.env.INTERNAL_API_KEY}`, 'x-user-id': userId },
      },
      (response) => {
        let text = '';
        const ended = new Promise<string>((done) =>
          response
            .setEncoding('utf8')
            .on('data', (c: string) => (text += c))
            .on('end', () => done(text)),
        );
        resolve({ status: response.statusCode!, response, request, body: () => ended });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer to ${path}`))).on('error', reject);
  });
}

const userOne = '00000000-0000-4000-8000-000000000001';
const userTwo = '00000000-0000-4000-8000-000000000002';
const userThree = '00000000-0000-4000-8000-000000000003';

t.test(
  'streams never take the connections short requests use; each caller and the process are capped; a closed stream frees its slot',
  async (t) => {
    const service = await startStreamingService(t);
    const { edge, port } = await startEdge(t, service.origin, {
      EDGE_SERVICE_CONNECTIONS: '1',
      EDGE_STREAMS_PER_USER: '2',
      EDGE_STREAMS_MAX: '3',
    });
    const first = await open(port, '/stream', userOne);
    const second = await open(port, '/stream', userOne);
    t.same([first.status, second.status], [200, 200], 'two streams, more than the one connection short requests have');
    const short = await open(port, '/short', userTwo);
    t.equal(short.status, 200, "another caller's short request is answered");
    t.same(JSON.parse(await short.body()), { ok: true });

    const third = await open(port, '/stream', userOne);
    t.equal(third.status, 429, "past the caller's cap");
    t.same(JSON.parse(await third.body()), { error: 'Too many open streams', code: 'TOO_MANY_STREAMS', limit: 2 });
    const others = await open(port, '/stream', userTwo);
    t.equal(others.status, 200, 'another caller has slots of their own');
    const full = await open(port, '/stream', userThree);
    t.equal(full.status, 429, "past the process's cap");
    t.same(JSON.parse(await full.body()), {
      error: 'Too many open streams on this server',
      code: 'STREAMS_FULL',
      limit: 3,
    });

    const given = once(edge.streams, 'given');
    first.request.destroy();
    t.same(await given, [`user:${userOne}`], 'closing a stream gives its slot back');
    const again = await open(port, '/stream', userOne);
    t.equal(again.status, 200, 'and the caller may open another');
    for (const stream of [second, others, again]) stream.request.destroy();
  },
);

t.test(
  'a request that waits for a connection past EDGE_QUEUE_TIMEOUT_MS is answered 503, and the service never sees it',
  async (t) => {
    const service = await startStreamingService(t);
    const { port } = await startEdge(t, service.origin, {
      EDGE_SERVICE_CONNECTIONS: '1',
      EDGE_QUEUE_TIMEOUT_MS: '200',
    });
    const slow = open(port, '/slow', userOne);
    const waiting = await open(port, '/short', userTwo);
    t.equal(waiting.status, 503, 'the one connection is busy past the deadline');
    t.same(JSON.parse(await waiting.body()), { error: 'Service busy, try again' });
    service.answerSlow();
    t.equal((await slow).status, 200);
    const next = await open(port, '/short', userTwo);
    t.equal(next.status, 200, 'the connection serves the next request');
    t.same(
      service.received,
      ['/slow', '/short'],
      'the service saw the slow request and the next one, never the one answered 503',
    );
  },
);

t.test(
  'a HEAD of a stream and an upload still arriving are long-lived too: they never take the connections of short requests',
  async (t) => {
    const service = await startStreamingService(t);
    const { port } = await startEdge(t, service.origin, { EDGE_SERVICE_CONNECTIONS: '1', EDGE_STREAMS_PER_USER: '2' });
    const heads = [await open(port, '/stream', userOne, 'HEAD'), await open(port, '/stream', userOne, 'HEAD')];
    t.same(
      heads.map((head) => head.status),
      [200, 200],
      'HEADs of the stream, more than the one connection of short requests',
    );
    // The service never ends a HEAD of its stream, so the connection it came on stays taken at the service.
    t.equal((await open(port, '/short', userTwo)).status, 200, 'after HEADs of a stream, a short request is answered');
    for (const head of heads) head.request.destroy();

    const uploads = [userTwo, userThree].map((userId) => {
      const request = http.request({
        method: 'POST',
        host: '127.0.0.1',
        port,
        path: '/upload',
        agent: false,
        headers: {
          authorization: `Bearer ${process.env.INTERNAL_API_KEY}`,
          'x-user-id': userId,
          'content-type': 'application/octet-stream',
          'transfer-encoding': 'chunked',
        },
      });
      request.on('error', () => {});
      request.write('a first chunk, the rest never comes');
      return request;
    });
    let arrived = 0;
    await new Promise<void>((resolve) => {
      const onRequest = (url: string) => {
        if (url === '/upload' && ++arrived === 2) {
          service.arrivals.off('request', onRequest);
          resolve();
        }
      };
      service.arrivals.on('request', onRequest);
    });
    const short = await open(port, '/short', userOne);
    t.equal(short.status, 200, 'with two uploads arriving (more than the one connection), a short request is answered');
    for (const request of uploads) request.destroy();
  },
);
