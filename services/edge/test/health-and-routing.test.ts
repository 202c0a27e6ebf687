import t from 'tap';
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEdge, echoRoutes, startEchoService } from './helper.ts';

t.test('web /api/health: always 200 with status, health and timestamp; no cpu/memory fields', async (t) => {
  const edge = await buildEdge(t, 'web', 'http://127.0.0.1:9');
  const res = await edge.inject({ method: 'GET', url: '/api/health' });
  t.equal(res.statusCode, 200);
  t.same(Object.keys(res.json()).sort(), ['health', 'status', 'timestamp']);
  t.equal(res.json().status, 'ok');
  t.ok(!Number.isNaN(Date.parse(res.json().timestamp)));
});

t.test('backend /health pings the configured container engine and reports the kill switch', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'engine-'));
  const socketPath = join(dir, 'engine.sock');
  const engine = createServer((req, res) => {
    res.statusCode = req.url === '/_ping' ? 200 : 404;
    res.end('OK');
  });
  await new Promise<void>((resolve) => engine.listen(socketPath, resolve));
  t.teardown(() => engine.close());
  const up = await buildEdge(t, 'backend', 'http://127.0.0.1:9', { DOCKER_HOST: `unix://${socketPath}`, PROVISIONING_ENABLED: 'false' });
  const res = await up.inject({ method: 'GET', url: '/health' });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { status: 'ok', docker: 'available', provisioning: 'disabled', provider: 'docker' });
  t.same(res.json().dependencies, { postgres: 'ok', redis: 'ok' }, "the edge's own PostgreSQL and Redis answer");
  const down = await buildEdge(t, 'backend', 'http://127.0.0.1:9', { DOCKER_HOST: `unix://${join(dir, 'absent.sock')}` });
  t.match((await down.inject({ method: 'GET', url: '/health' })).json(), { docker: 'unavailable', provisioning: 'enabled' });
});

t.test('unknown routes 404 at the edge; a service that is down is 502 {error}', async (t) => {
  const edge = await buildEdge(t, 'web', 'http://127.0.0.1:9');
  const unknown = await edge.inject({ method: 'GET', url: '/api/nothing-here' });
  t.equal(unknown.statusCode, 404);
  t.same(unknown.json(), { error: 'Not found' });
  const down = await edge.inject({ method: 'GET', url: '/echo' });
  t.equal(down.statusCode, 502);
  t.same(down.json(), { error: 'Backend unavailable' });
});

t.test('request ids: a sane incoming id is kept and passed on, otherwise one is made', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream);
  const kept = await edge.inject({ method: 'GET', url: '/echo', headers: { 'x-request-id': 'req-12345678' } });
  t.equal(kept.headers['x-request-id'], 'req-12345678');
  t.equal(kept.json().headers['x-request-id'], 'req-12345678');
  t.equal(kept.json().identity.requestId, 'req-12345678');
  const made = await edge.inject({ method: 'GET', url: '/echo', headers: { 'x-request-id': 'bad id with spaces' } });
  t.match(made.headers['x-request-id'], /^[0-9a-f-]{36}$/);
});

t.test('OpenAPI: each surface publishes its catalog routes', async (t) => {
  const web = await buildEdge(t, 'web', 'http://127.0.0.1:9');
  const doc = (await web.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  t.equal(doc.openapi, '3.1.0');
  t.ok(doc.paths['/echo'].post);
  t.notOk(doc.paths['/keyless'], 'backend-only route absent from the web document');
  const backend = await buildEdge(t, 'backend', 'http://127.0.0.1:9');
  const bdoc = (await backend.inject({ method: 'GET', url: '/openapi.json' })).json();
  t.same(bdoc.paths['/echo'].get.security, [{ internalApiKey: [] }]);
  t.same(bdoc.paths['/keyless'].get.security, []);
  t.equal(Object.keys(bdoc.paths).length, echoRoutes.filter((r) => r.surfaces.includes('backend')).length);
});
