import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { sealAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { loadAgentsConfig } from '../src/config.ts';
import { backend, web } from './agents-harness.ts';
import { build } from './helper.ts';

// GET /api/agents/:id/messages reads the agent's conversation from its own gateway. Here a local
// server stands in for the OpenClaw gateway's `POST /tools/invoke`, answering `sessions_list` and
// `sessions_history` with the shapes openclaw@2026.9.6 answered on this machine (the real gateway
// is exercised in agents-messages-openclaw.test.ts).
const env = () => ({
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-msgs${randomBytes(3).toString('hex')}`,
  RUNTIME_DRIVER: 'process',
  AGENT_GATEWAY_READ_TIMEOUT_MS: '2000',
});
const HOOK_SESSION = 'agent:main:cron:445ea236-aaf2-4bb8-a0ce-164244b81d4f';

const transcripts: Record<string, unknown[]> = {
  [HOOK_SESSION]: [
    {
      role: 'user',
      content: 'Make me some tea',
      timestamp: Date.parse('2026-11-22T05:29:22Z'),
      __openclaw: { id: 'm-1', seq: 1 },
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Tea is ready.' },
        { type: 'toolCall', id: 'x', name: 'noop' },
      ],
      model: 'anthropic/claude-opus-4-6',
      timestamp: Date.parse('2026-11-22T05:29:27Z'),
      __openclaw: { id: 'm-2', seq: 2 },
    },
  ],
  'agent:main:main': [
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'Good morning.' }],
      model: 'anthropic/claude-opus-4-6',
      timestamp: Date.parse('2026-11-22T05:20:00Z'),
      __openclaw: { id: 'm-0', seq: 2 },
    },
  ],
};

/** The agent gateway's tool endpoint: the bearer must be the agent's gateway token. */
async function gatewayPeer(
  t: Test,
  token: string,
  behaviour: 'ok' | 'html' | 'huge' | 'huge-chunked' | 'busy-twice' | 'busy' = 'ok',
) {
  const calls: { tool: string; args: Record<string, unknown>; authorization: string | undefined }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/tools/invoke') return res.writeHead(404).end('Not Found');
      const { tool, args } = JSON.parse(body) as { tool: string; args: Record<string, unknown> };
      calls.push({ tool, args, authorization: req.headers.authorization });
      if (req.headers.authorization !== `Bearer ${token}`) return res.writeHead(401).end('Unauthorized');
      if (behaviour === 'html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops</html>');
      // What openclaw@2026.9.6 answers while its gateway context is unavailable.
      if (behaviour === 'busy' || (behaviour === 'busy-twice' && calls.length <= 2))
        return res.writeHead(503, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: { message: 'Gateway context is unavailable; retry shortly.', type: 'unavailable' },
          }),
        );
      const details =
        tool === 'sessions_list'
          ? {
              count: 2,
              sessions: [
                { key: 'agent:main:main', kind: 'main', updatedAt: Date.parse('2026-11-22T05:20:00Z') },
                { key: HOOK_SESSION, kind: 'cron', updatedAt: Date.parse('2026-11-22T05:29:27Z') },
              ],
              hasMore: false,
            }
          : {
              sessionKey: args.sessionKey,
              messages: (transcripts[String(args.sessionKey)] ?? []).slice(-Number(args.limit)),
              truncated: false,
            };
      const answer = JSON.stringify({
        ok: true,
        result: { content: [{ type: 'text', text: JSON.stringify(details) }], details },
        ...(behaviour.startsWith('huge') ? { padding: 'p'.repeat(64 * 1024) } : {}),
      });
      if (behaviour !== 'huge-chunked') return res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      // Without a Content-Length: the size shows only as the answer streams in.
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < answer.length; at += 4096) res.write(answer.slice(at, at + 4096));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, calls };
}

/** An agent of `userId` whose gateway is at `gatewayUrl`, with `token` sealed as its gateway token. */
async function agentAt(userId: string, gatewayUrl: string | null, token: string) {
  const keyring = parseKeyring(loadAgentsConfig({ ...process.env }).ENCRYPTION_KEYS);
  const { id } = await systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'Talker',
      status: 'running',
      model: 'claude-opus-4-6',
      tools_profile: 'messaging',
      subdomain: `m-${randomUUID().slice(0, 8)}`,
      gateway_url: gatewayUrl,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await systemDb()
    .updateTable('agents')
    .set({ gateway_token_sealed: sealAgentSecret(keyring, id, 'gateway-token', token) })
    .where('id', '=', id)
    .execute();
  return id;
}

t.test("the most recent session's messages, read with the agent's own gateway token", async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  const token = randomBytes(16).toString('hex');
  const peer = await gatewayPeer(t, token);
  const id = await agentAt(user.id, peer.url, token);
  const res = await app.inject({ method: 'GET', url: `/api/agents/${id}/messages`, headers: web(user) });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), {
    agentId: id,
    sessionKey: HOOK_SESSION,
    status: 'ok',
    source: 'gateway',
    count: 2,
    sessions: [
      { key: HOOK_SESSION, kind: 'cron', updatedAt: '2026-11-22T05:29:27.000Z' },
      { key: 'agent:main:main', kind: 'main', updatedAt: '2026-11-22T05:20:00.000Z' },
    ],
    messages: [
      { id: 'm-1', role: 'user', text: 'Make me some tea', timestamp: '2026-11-22T05:29:22.000Z', model: null },
      {
        id: 'm-2',
        role: 'assistant',
        text: 'Tea is ready.',
        timestamp: '2026-11-22T05:29:27.000Z',
        model: 'anthropic/claude-opus-4-6',
      },
    ],
  });
  t.same(
    peer.calls.map((c) => [c.tool, c.authorization]),
    [
      ['sessions_list', `Bearer ${token}`],
      ['sessions_history', `Bearer ${token}`],
    ],
  );
  t.match(peer.calls[1]!.args, { sessionKey: HOOK_SESSION, limit: 50, includeTools: false });
});

t.test('a named session and a limit, on the backend surface too', async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  const token = randomBytes(16).toString('hex');
  const peer = await gatewayPeer(t, token);
  const id = await agentAt(user.id, peer.url, token);
  const main = await app.inject({
    method: 'GET',
    url: `/api/agents/${id}/messages?sessionKey=agent:main:main`,
    headers: backend(user),
  });
  t.equal(main.statusCode, 200, main.body);
  t.match(main.json(), { sessionKey: /^agent:main:main$/, count: 1, messages: [{ text: 'Good morning.' }] });
  const last = await app.inject({ method: 'GET', url: `/api/agents/${id}/messages?limit=1`, headers: web(user) });
  t.match(last.json(), { count: 1, messages: [{ role: /^assistant$/, text: 'Tea is ready.' }] });
  const unknown = await app.inject({
    method: 'GET',
    url: `/api/agents/${id}/messages?sessionKey=agent:main:nope`,
    headers: web(user),
  });
  t.equal(unknown.statusCode, 404);
  t.same(unknown.json(), { error: 'Session not found' });
  for (const query of ['limit=0', 'limit=101', 'limit=abc', 'sessionKey=a%20b', 'other=1']) {
    const bad = await app.inject({ method: 'GET', url: `/api/agents/${id}/messages?${query}`, headers: web(user) });
    t.equal(bad.statusCode, 400, query);
  }
});

t.test("another user's agent is 404, and its gateway is never called", async (t) => {
  const app = await build(t, env());
  const owner = await createUserRow();
  const other = await createUserRow();
  const token = randomBytes(16).toString('hex');
  const peer = await gatewayPeer(t, token);
  const id = await agentAt(owner.id, peer.url, token);
  for (const headers of [web(other), backend(other)]) {
    const res = await app.inject({ method: 'GET', url: `/api/agents/${id}/messages`, headers });
    t.equal(res.statusCode, 404);
  }
  t.equal(peer.calls.length, 0);
});

t.test('no stand-in data when the gateway cannot answer: 502', async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  const token = randomBytes(16).toString('hex');
  const html = await gatewayPeer(t, token, 'html');
  const wrongToken = await gatewayPeer(t, 'another-token');
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  for (const url of [html.url, wrongToken.url, `http://127.0.0.1:${closed}`, null]) {
    const id = await agentAt(user.id, url, token);
    const res = await app.inject({ method: 'GET', url: `/api/agents/${id}/messages`, headers: web(user) });
    t.equal(res.statusCode, 502, String(url));
    t.same(res.json(), { error: 'Agent gateway unavailable' });
  }
});

t.test(
  'a gateway briefly without its context (503, retry shortly) is asked again within the read deadline',
  async (t) => {
    const app = await build(t, env());
    const user = await createUserRow();
    const token = randomBytes(16).toString('hex');
    const briefly = await gatewayPeer(t, token, 'busy-twice');
    const res = await app.inject({
      method: 'GET',
      url: `/api/agents/${await agentAt(user.id, briefly.url, token)}/messages`,
      headers: web(user),
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().count, 2, 'the transcript, once it answered');
    t.same(
      briefly.calls.map((c) => c.tool),
      ['sessions_list', 'sessions_list', 'sessions_list', 'sessions_history'],
      'the list asked again after each 503',
    );
    const busy = await gatewayPeer(t, token, 'busy');
    const gaveUp = await app.inject({
      method: 'GET',
      url: `/api/agents/${await agentAt(user.id, busy.url, token)}/messages`,
      headers: web(user),
    });
    t.equal(gaveUp.statusCode, 502, 'a gateway that stays unavailable past the deadline is a gateway error');
    t.ok(busy.calls.length > 1 && busy.calls.length < 20, `asked a few times with backoff (${busy.calls.length})`);
  },
);

t.test('an answer larger than AGENT_ANSWER_MAX_BYTES is a gateway error, not read whole', async (t) => {
  const app = await build(t, { ...env(), AGENT_ANSWER_MAX_BYTES: String(16 * 1024) });
  const user = await createUserRow();
  const token = randomBytes(16).toString('hex');
  for (const behaviour of ['huge', 'huge-chunked'] as const) {
    const peer = await gatewayPeer(t, token, behaviour);
    const id = await agentAt(user.id, peer.url, token);
    const res = await app.inject({ method: 'GET', url: `/api/agents/${id}/messages`, headers: web(user) });
    t.equal(res.statusCode, 502, behaviour);
    t.same(res.json(), { error: 'Agent gateway unavailable' });
  }
  const small = await gatewayPeer(t, token);
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: `/api/agents/${await agentAt(user.id, small.url, token)}/messages`,
        headers: web(user),
      })
    ).statusCode,
    200,
    'an answer within the cap',
  );
});
