import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentGatewayError, probeAgent, runAgentTurn, wakeAgent } from '../../src/index.ts';

// An agent's gateway runs in a tenant's container and answers what it likes: the platform reads
// at most a capped number of bytes of it, whether the size is announced or only streams in.
let size = 0;
let chunked = false;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const body = JSON.stringify({ ok: true, runId: 'run-1', ready: true, padding: 'p'.repeat(size) });
    if (!chunked) return res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    for (let at = 0; at < body.length; at += 1024) res.write(body.slice(at, at + 1024));
    res.end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(() => {
  server.closeAllConnections();
  server.close();
});
const target = { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hooksToken: 'hooks-token' };

t.test('hooks: an answer within the cap is read, a larger one is a gateway error', async (t) => {
  for (const streamed of [false, true]) {
    chunked = streamed;
    size = 100;
    t.same(await runAgentTurn(target, { message: 'hi' }, 5000, 4096), { runId: 'run-1' });
    size = 64 * 1024;
    await t.rejects(
      runAgentTurn(target, { message: 'hi' }, 5000, 4096),
      { name: /^AgentGatewayError$/, message: /larger than 4096 bytes/ },
      streamed ? 'streamed' : 'announced',
    );
    await t.rejects(wakeAgent(target, 'Heartbeat', 5000, 4096), AgentGatewayError);
  }
  size = 2 * 1024 * 1024;
  await t.rejects(
    runAgentTurn(target, { message: 'hi' }),
    { message: /larger than 1048576 bytes/ },
    'the default cap is 1 MB',
  );
});

t.test('probes: an oversized answer counts as no answer', async (t) => {
  chunked = false;
  size = 100;
  t.same(await probeAgent(target.baseUrl, 5000, 4096), { live: true, ready: true });
  size = 64 * 1024;
  t.same(await probeAgent(target.baseUrl, 5000, 4096), { live: false, ready: null });
});
