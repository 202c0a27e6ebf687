import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTROL_FRAME_LIMIT_BYTES, sealAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import t from 'tap';
import WebSocket, { WebSocketServer } from 'ws';
import { loadAgentsConfig } from '../src/config.ts';
import { chatStreamEvents } from '../src/domain/gateway/chat.ts';
import { RELAYED_FRAME_LIMIT_BYTES } from '../src/domain/gateway/relay-limits.ts';
import { web } from './agents-harness.ts';
import { build } from './helper.ts';

// Regressions (issue 27, N10): a tenant decides what its agent's gateway sends, and the chat stream
// and the control plane read it without a bound. Every read from an agent stops at its cap: the
// caller gets a clear 502 (or an SSE error event) and the service holds no more than the cap.
const CAP = 64 * 1024;
const CHUNK = 16 * 1024;

/** An endless body, counting what the reader pulled from it. */
function endless(piece: (n: number) => string) {
  const counted = { bytes: 0 };
  async function* body() {
    for (let n = 0; ; n++) {
      const chunk = Buffer.from(piece(n));
      counted.bytes += chunk.length;
      yield new Uint8Array(chunk);
    }
  }
  return { counted, body: body() };
}

t.test('a chat stream is read within its cap: one endless event, or an endless answer', async (t) => {
  const open = endless(() => `${'x'.repeat(CHUNK)}`);
  await t.rejects(
    (async () => {
      for await (const _ of chatStreamEvents(open.body, CAP));
    })(),
    { statusCode: 502, message: `The agent's answer is larger than ${CAP} bytes` },
  );
  t.ok(
    open.counted.bytes <= CAP + 16 * 1024 + CHUNK,
    `an event without its end: ${open.counted.bytes} bytes read, at most the cap, its envelope and one chunk`,
  );

  const delta = (n: number) =>
    `data: ${JSON.stringify({ id: `c${n}`, choices: [{ delta: { content: 'y'.repeat(1024) } }] })}\n\n`;
  const answer = endless(delta);
  let deltas = 0;
  await t.rejects(
    (async () => {
      for await (const event of chatStreamEvents(answer.body, CAP)) if (event.type === 'delta') deltas++;
    })(),
    { statusCode: 502, message: `The agent's answer is larger than ${CAP} bytes` },
  );
  t.equal(deltas, CAP / 1024, 'every delta within the cap is passed on, none past it');
  t.ok(
    answer.counted.bytes <= CAP + (CAP / 1024 + 1) * 128,
    `${answer.counted.bytes} bytes read: the answer's cap, and its events' envelopes (under 128 bytes each)`,
  );
});

t.test("the routes answer a clear error and stop reading when an agent's gateway sends too much", async (t) => {
  // A gateway that never stops: an endless SSE answer, an endless JSON body, a control frame over the limit.
  const written: Record<string, { bytes: number; closed: Promise<unknown> }> = {};
  const flood = async (res: ServerResponse, name: string, piece: (n: number) => string) => {
    const state = { bytes: 0, closed: once(res, 'close') };
    written[name] = state;
    let stopped = false;
    res.on('close', () => {
      stopped = true;
    });
    for (let n = 0; !stopped; n++) {
      const chunk = piece(n);
      state.bytes += chunk.length;
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), state.closed]);
    }
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const stream = req.headers['x-openclaw-session-key'] === 'agentyard:web:stream';
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        void flood(
          res,
          'stream',
          (n) =>
            `data: ${JSON.stringify({ id: 'c', choices: [{ delta: { content: `${n}`.padEnd(4096, '.') } }] })}\n\n`,
        );
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":"c","choices":[{"message":{"role":"assistant","content":"');
        void flood(res, 'whole', () => 'z'.repeat(CHUNK));
      }
    });
  });
  const frames = new WebSocketServer({ server });
  // The control plane connects at `/`; the runtime proxy relays a caller's WebSocket at `/relay`.
  const closedAt: Record<string, Promise<number>> = {};
  const closedAtResolve: Record<string, (code: number) => void> = {};
  for (const path of ['/', '/relay']) closedAt[path] = new Promise((resolve) => (closedAtResolve[path] = resolve));
  frames.on('connection', (socket, req) => {
    const path = req.url ?? '/';
    socket.on('close', (code) => closedAtResolve[path]?.(code));
    socket.send('f'.repeat((path === '/relay' ? RELAYED_FRAME_LIMIT_BYTES : CONTROL_FRAME_LIMIT_BYTES) + 1));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    frames.close();
    server.closeAllConnections();
    server.close();
  });

  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-read-bounds-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_ANSWER_MAX_BYTES: String(CAP),
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-bounds${randomBytes(3).toString('hex')}`,
  };
  const app = await build(t, env);
  const owner = await createUserRow({ plan: 'label' });
  const provisioned = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: 'flooding gateway' },
  });
  t.equal(provisioned.statusCode, 201, provisioned.body);
  const agentId = provisioned.json().agent.id as string;
  // The agent runs, as far as the platform knows, with its gateway here.
  const keyring = parseKeyring(loadAgentsConfig({ ...process.env, ...env }).ENCRYPTION_KEYS);
  await systemDb()
    .updateTable('agents')
    .set({
      status: 'running',
      gateway_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      gateway_token_sealed: sealAgentSecret(keyring, agentId, 'gateway-token', 'gateway-token'),
    })
    .where('id', '=', agentId)
    .execute();

  const whole = await app.inject({
    method: 'POST',
    url: '/api/chat',
    headers: web(owner),
    payload: { agentId, message: 'hi' },
  });
  t.equal(whole.statusCode, 502, whole.body);
  t.same(whole.json(), { error: `The agent's answer is larger than ${CAP} bytes` });
  await written.whole!.closed;
  t.pass('the service closed the endless answer');

  const streamed = await app.inject({
    method: 'POST',
    url: '/api/chat',
    headers: web(owner),
    payload: { agentId, message: 'hi', stream: true, sessionKey: 'agentyard:web:stream' },
  });
  t.equal(streamed.statusCode, 200);
  t.match(streamed.body, /^event: delta\n/);
  t.match(
    streamed.body,
    new RegExp(`event: error\\ndata: \\{"error":"The agent's answer is larger than ${CAP} bytes"\\}\\n\\n$`),
    'the stream ends in an error event',
  );
  t.ok(streamed.body.length < 2 * CAP, `what reached the caller stayed within the cap (${streamed.body.length} bytes)`);
  await written.stream!.closed;
  t.pass('the service closed the endless stream');

  const memory = await app.inject({ method: 'GET', url: `/api/memory?agentId=${agentId}`, headers: web(owner) });
  t.equal(memory.statusCode, 502, memory.body);
  t.same(memory.json(), { error: `The agent's answer is larger than ${CONTROL_FRAME_LIMIT_BYTES} bytes` });
  t.equal(await closedAt['/']!, 1009, 'the control connection refused the frame as too big');

  // The backend's runtime proxy: a frame over the relay's limit closes both sides, unread.
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const caller = new WebSocket(`${base.replace(/^http/, 'ws')}/api/runtime/proxy/${agentId}/relay`, {
    headers: identityHeaders({ surface: 'backend', auth: 'service', userId: owner.id, email: owner.email }),
  });
  const [callerCode] = (await once(caller, 'close')) as [number];
  t.equal(callerCode, 1009, 'the caller is told the frame was too big');
  t.equal(await closedAt['/relay']!, 1009, "the proxy refused the agent's frame");
});
