import t, { type Test } from 'tap';
import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { route } from '@agentyard/proto-schemas';
import { Relay } from '../src/plugins/forward.ts';
import { buildEdge } from './helper.ts';

/** A service written here: each test answers `/relay/:case` as it needs to, over plain node:http. */
async function startService(t: Test, handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const relayRoute = route({
  method: ['GET', 'POST'],
  url: '/relay/:case',
  service: 'auth',
  surfaces: ['backend'],
  auth: 'none',
  backendKey: false,
  summary: 'relay',
  schema: { response: {} },
});

/** An edge listening on loopback in front of `service`, so a test can read or drop the connection itself. */
async function edgeBefore(t: Test, service: string): Promise<string> {
  const edge = await buildEdge(t, 'backend', service, {}, [relayRoute]);
  await edge.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(edge.server.address() as AddressInfo).port}`;
}

/** A request through the edge that resolves with the response as soon as its headers arrive. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string[] } = {}) {
  const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers });
  for (const chunk of options.body ?? []) req.write(chunk);
  req.end();
  return { req, response: once(req, 'response').then(([res]) => res as IncomingMessage) };
}

const readAll = async (res: IncomingMessage) => {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
};

t.test('an event stream reaches the client event by event, not when the service has finished', async (t) => {
  const secondMayGo = Promise.withResolvers<void>();
  const service = await startService(t, async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    await secondMayGo.promise;
    res.end('data: two\n\n');
  });
  const res = await send(`${await edgeBefore(t, service)}/relay/stream`).response;
  t.equal(res.headers['content-type'], 'text/event-stream');
  t.ok(res.headers['x-request-id'], "the edge's own headers are there too");
  const [first] = (await once(res, 'data')) as [Buffer];
  t.equal(first.toString(), 'data: one\n\n', 'the first event arrived while the service still holds the second');
  secondMayGo.resolve();
  t.equal(await readAll(res), 'data: two\n\n');
  t.ok(res.complete);
});

t.test('a service that fails mid-answer cuts the client off: an interrupted stream never looks complete', async (t) => {
  const service = await startService(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n', () => req.socket.destroy());
  });
  const res = await send(`${await edgeBefore(t, service)}/relay/drop`).response;
  t.equal(res.statusCode, 200);
  let received = '';
  res.on('data', (chunk: Buffer) => {
    received += chunk;
  });
  const closed = new Promise((resolve) => res.once('close', resolve));
  res.on('error', () => undefined); // 'aborted': what this test expects
  await closed;
  t.equal(received, 'data: one\n\n');
  t.notOk(res.complete, 'the client sees the answer end early');
});

t.test("a client that goes away ends the service's request too", async (t) => {
  const serviceSawClose = Promise.withResolvers<boolean>();
  const service = await startService(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    res.once('close', () => serviceSawClose.resolve(res.writableFinished));
  });
  const { req, response } = send(`${await edgeBefore(t, service)}/relay/leave`);
  const res = await response;
  await once(res, 'data');
  req.destroy();
  t.equal(await serviceSawClose.promise, false, "the service's answer was cut, not left running");
});

t.test('a service that drops the request before answering is a 502 {error} with the request id', async (t) => {
  const service = await startService(t, (req) => req.socket.destroy());
  const res = await send(`${await edgeBefore(t, service)}/relay/refuse`).response;
  t.equal(res.statusCode, 502);
  t.ok(res.headers['x-request-id']);
  t.same(JSON.parse(await readAll(res)), { error: 'Backend unavailable' });
});

t.test("HEAD: the service's status and headers, no body", async (t) => {
  const service = await startService(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5', 'x-method': req.method ?? '' });
    res.end(req.method === 'HEAD' ? undefined : 'hello');
  });
  const res = await send(`${await edgeBefore(t, service)}/relay/head`, { method: 'HEAD' }).response;
  t.equal(res.statusCode, 200);
  t.equal(res.headers['x-method'], 'HEAD');
  t.equal(res.headers['content-length'], '5');
  t.equal(await readAll(res), '');
});

t.test('hop-by-hop headers stay on their hop both ways, and Connection cannot strip what the edge adds', async (t) => {
  const service = await startService(t, (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.setHeader('connection', 'keep-alive, x-service-private');
    res.setHeader('x-service-private', 'secret of this hop');
    res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
    res.end(JSON.stringify(req.headers));
  });
  const res = await send(`${await edgeBefore(t, service)}/relay/headers`, {
    headers: {
      connection: 'keep-alive, x-client-private, x-agentyard-identity, x-request-id',
      'x-client-private': 'secret of this hop',
      te: 'trailers',
      'proxy-connection': 'keep-alive',
      'x-kept': 'yes',
    },
  }).response;
  const seen = JSON.parse(await readAll(res)) as Record<string, string>;
  t.equal(seen['x-kept'], 'yes');
  for (const name of ['x-client-private', 'te', 'proxy-connection']) t.notOk(name in seen, `${name} is not forwarded`);
  t.match(seen['x-agentyard-identity'], /^v1\./, 'the signed identity is forwarded whatever Connection names');
  t.ok(seen['x-request-id']);
  t.equal(seen.connection, 'keep-alive', "the edge's own connection to the service");
  t.notOk('x-service-private' in res.headers, "a header the service's Connection names is not relayed");
  t.same(res.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/'], 'repeated headers stay separate');
});

t.test('a chunked request body reaches the service whole, with its length', async (t) => {
  const service = await startService(t, async (req, res) => {
    const body = await readAll(req);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        body,
        length: req.headers['content-length'] ?? null,
        chunked: 'transfer-encoding' in req.headers,
      }),
    );
  });
  const res = await send(`${await edgeBefore(t, service)}/relay/upload`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    body: ['part one, ', 'part two'],
  }).response;
  t.same(JSON.parse(await readAll(res)), { body: 'part one, part two', length: '18', chunked: false });
});

t.test('a large answer arrives whole to a client that reads slowly', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const total = 512; // 32 MB
  const service = await startService(t, async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    for (let i = 0; i < total; i++) if (!res.write(chunk)) await once(res, 'drain');
    res.end();
  });
  const res = await send(`${await edgeBefore(t, service)}/relay/large`).response;
  let bytes = 0;
  for await (const piece of res) {
    bytes += (piece as Buffer).length;
    await new Promise(setImmediate); // a reader that yields between chunks
  }
  t.equal(bytes, chunk.length * total);
});

t.test(
  "backpressure: the relay holds the service back while the client's side is full, and lets it go on drain",
  async (t) => {
    const clientSide = Promise.withResolvers<ServerResponse>();
    const { response } = send(`${await startService(t, (_req, res) => clientSide.resolve(res))}/`);
    const res = await clientSide.promise;
    const calls: string[] = [];
    const resumed = Promise.withResolvers<void>();
    const controller = {
      pause: () => calls.push('pause'),
      resume: () => {
        calls.push('resume');
        resumed.resolve();
      },
      abort: () => calls.push('abort'),
    };
    const relay = new Relay(
      { log: { warn: () => undefined }, server: { serviceName: 'edge-web' } } as never,
      { raw: res, getHeaders: () => ({}), elapsedTime: 0 } as never,
    );
    relay.onRequestStart(controller as never);
    relay.onResponseStart(controller as never, 200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(32 * 1024 * 1024, 'x'); // more than the kernel's socket buffers hold: only the client's reading drains it
    relay.onResponseData(controller as never, chunk);
    const client = await response;
    t.same(calls, ['pause'], 'a write the response cannot take at once pauses the service, until the client reads');
    let bytes = 0;
    client.on('data', (piece: Buffer) => {
      bytes += piece.length;
    });
    await resumed.promise;
    t.same(calls, ['pause', 'resume'], 'drained: the service goes on');
    relay.onResponseEnd();
    await once(client, 'end');
    t.equal(bytes, chunk.length);
  },
);
