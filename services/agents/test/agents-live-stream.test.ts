import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createUserRow } from '@agentyard/testing';
import t, { type Test } from 'tap';
import { web } from './agents-harness.ts';
import { build } from './helper.ts';

// /api/provision, backend path: when the live-stream provider is configured the platform creates a
// stream (Mux-style `POST /video/v1/live-streams`, HTTP Basic token) and answers its id and key; a
// provider failure or timeout leaves them null and does not fail provisioning.
type Reply = 'created' | 'error' | 'hang' | 'flood';

async function streamProvider(t: Test, reply: Reply) {
  const calls: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const flood = { written: 0, closed: false };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      calls.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (reply === 'hang') return;
      if (reply === 'flood') {
        // An answer without end, written as fast as it is read, until the platform hangs up.
        res.writeHead(201, { 'content-type': 'application/json' });
        res.on('close', () => {
          flood.closed = true;
        });
        const more = () => {
          for (let room = true; room && !flood.closed; flood.written += 64 * 1024)
            room = res.write('x'.repeat(64 * 1024));
        };
        res.on('drain', more);
        return more();
      }
      if (reply === 'error')
        return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"type":"internal"}}');
      res
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data: { id: `ls_${calls.length}`, stream_key: `key-${calls.length}`, status: 'idle' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, calls, flood };
}

async function provisioningBackend(t: Test) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: true, url: 'https://rt.example.test/u9', subdomain: 'u9' })),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/provision`;
}

const env = async (t: Test, provider: string, extra: Record<string, string> = {}) => ({
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-live${randomBytes(3).toString('hex')}`,
  RUNTIME_DRIVER: 'process',
  PROVISION_BACKEND_URL: await provisioningBackend(t),
  LIVE_STREAM_API_URL: provider,
  ...extra,
});

t.test('configured: a live stream is created and its id and key returned', async (t) => {
  const provider = await streamProvider(t, 'created');
  const app = await build(
    t,
    await env(t, provider.url, { LIVE_STREAM_TOKEN_ID: 'token-id', LIVE_STREAM_TOKEN_SECRET: 'token-secret' }),
  );
  const user = await createUserRow();
  const res = await app.inject({
    method: 'POST',
    url: '/api/provision',
    headers: web(user),
    payload: { autoProvision: true },
  });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), {
    success: true,
    userId: user.id,
    url: 'https://rt.example.test/u9',
    subdomain: 'u9',
    streamKey: 'key-1',
    liveStreamId: 'ls_1',
  });
  t.equal(provider.calls.length, 1);
  t.match(provider.calls[0], {
    method: /^POST$/,
    url: /^\/video\/v1\/live-streams$/,
    headers: { authorization: `Basic ${Buffer.from('token-id:token-secret').toString('base64')}` },
  });
  t.has(JSON.parse(provider.calls[0]!.body), { playback_policy: ['public'] });
});

t.test('not configured: no call to the provider, the fields are null', async (t) => {
  const provider = await streamProvider(t, 'created');
  const app = await build(t, await env(t, provider.url, { LIVE_STREAM_TOKEN_ID: 'token-id' }));
  const user = await createUserRow();
  const res = await app.inject({ method: 'POST', url: '/api/provision', headers: web(user), payload: {} });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), { success: true, streamKey: null, liveStreamId: null });
  t.equal(provider.calls.length, 0);
});

t.test('a provider error or timeout leaves the fields null and provisioning succeeds', async (t) => {
  // The error answers at once (the default timeout); a hang waits out a short one, still long enough
  // for the request to reach the provider on a loaded machine.
  for (const [reply, timeoutMs] of [
    ['error', '10000'],
    ['hang', '2000'],
  ] as const) {
    const provider = await streamProvider(t, reply);
    const app = await build(
      t,
      await env(t, provider.url, {
        LIVE_STREAM_TOKEN_ID: 'token-id',
        LIVE_STREAM_TOKEN_SECRET: 'token-secret',
        LIVE_STREAM_TIMEOUT_MS: timeoutMs,
      }),
    );
    const user = await createUserRow();
    const res = await app.inject({ method: 'POST', url: '/api/provision', headers: web(user), payload: {} });
    t.equal(res.statusCode, 200, reply);
    t.has(res.json(), { success: true, url: 'https://rt.example.test/u9', streamKey: null, liveStreamId: null }, reply);
    t.equal(provider.calls.length, 1, `${reply}: the provider was asked once`);
  }
});

t.test('an endless provider answer is read to 1 MB, not to its end (issue 27)', async (t) => {
  const provider = await streamProvider(t, 'flood');
  const app = await build(
    t,
    await env(t, provider.url, {
      LIVE_STREAM_TOKEN_ID: 'token-id',
      LIVE_STREAM_TOKEN_SECRET: 'token-secret',
      LIVE_STREAM_TIMEOUT_MS: '60000',
    }),
  );
  const user = await createUserRow();
  const res = await app.inject({ method: 'POST', url: '/api/provision', headers: web(user), payload: {} });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), { success: true, streamKey: null, liveStreamId: null });
  // What the provider wrote: the 1 MB read, plus what the sockets between hold (well under 16 MB here).
  t.ok(
    provider.flood.written < 17 * 1024 * 1024,
    `the platform stopped reading (${provider.flood.written} bytes written)`,
  );
});
