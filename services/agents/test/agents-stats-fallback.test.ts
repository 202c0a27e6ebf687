import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createUserRow, systemDb } from '@agentyard/testing';
import { backend, web } from './agents-harness.ts';
import { build } from './helper.ts';

// Agent stats when the runtime has no container to ask: the gateway's /healthz then /readyz answer
// with cpu and memory `—`; when neither answers, an error. A local server stands in for the gateway.
const env = () => ({
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-stats${randomBytes(3).toString('hex')}`,
  RUNTIME_DRIVER: 'process',
  AGENT_PROBE_TIMEOUT_MS: '1000',
});

async function probes(t: Test, ready: boolean) {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(req.url ?? '');
    if (req.url === '/healthz')
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"status":"live"}');
    if (req.url === '/readyz')
      return res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ ready }));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, asked };
}

const agentAt = async (userId: string, gatewayUrl: string | null) =>
  (
    await systemDb()
      .insertInto('agents')
      .values({
        user_id: userId,
        name: 'Probed',
        status: 'running',
        model: 'openrouter/auto',
        tools_profile: 'messaging',
        subdomain: `s-${randomUUID().slice(0, 8)}`,
        gateway_url: gatewayUrl,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;

t.test("no runtime stats: the gateway's probes answer, cpu and memory are —", async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  for (const ready of [true, false]) {
    const gateway = await probes(t, ready);
    const id = await agentAt(user.id, gateway.url);
    for (const [url, headers] of [
      [`/api/agents/${id}/stats`, web(user)],
      [`/api/agents/${id}/stats`, backend(user)],
      [`/api/runtime/instances/${id}/stats`, backend(user)],
    ] as const) {
      const res = await app.inject({ method: 'GET', url, headers });
      t.equal(res.statusCode, 200, res.body);
      t.same(res.json(), {
        id,
        status: ready ? 'ready' : 'live',
        health: 'not_found',
        cpu: '—',
        memory: '—',
        memoryLimit: '—',
        source: 'probe',
      });
    }
    t.same(gateway.asked.slice(0, 2), ['/healthz', '/readyz'], '/healthz first, then /readyz');
  }
});

t.test('neither the runtime nor the gateway answers: 502 with an error', async (t) => {
  const app = await build(t, env());
  const user = await createUserRow();
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  for (const gatewayUrl of [`http://127.0.0.1:${closed}`, null]) {
    const id = await agentAt(user.id, gatewayUrl);
    const res = await app.inject({ method: 'GET', url: `/api/agents/${id}/stats`, headers: web(user) });
    t.equal(res.statusCode, 502);
    t.same(res.json(), {
      error: 'Agent unreachable: neither the runtime nor the agent gateway answered',
      id,
      health: 'not_found',
    });
  }
});

t.test("another user's agent: 404, and its gateway is not probed", async (t) => {
  const app = await build(t, env());
  const owner = await createUserRow();
  const other = await createUserRow();
  const gateway = await probes(t, true);
  const id = await agentAt(owner.id, gateway.url);
  t.equal((await app.inject({ method: 'GET', url: `/api/agents/${id}/stats`, headers: web(other) })).statusCode, 404);
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/runtime/instances/${id}/stats`, headers: backend(other) }))
      .statusCode,
    404,
  );
  t.same(gateway.asked, []);
});
