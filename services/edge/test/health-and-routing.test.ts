import t from 'tap';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { IDENTITY_HEADER, type Identity, verifyIdentity } from '@agentyard/identity';
import { buildEdge, echoRoutes, startEchoService } from './helper.ts';

t.test('web /api/health: always 200 with status, health and timestamp; no cpu/memory fields', async (t) => {
  const edge = await buildEdge(t, 'web', 'http://127.0.0.1:9');
  const res = await edge.inject({ method: 'GET', url: '/api/health' });
  t.equal(res.statusCode, 200);
  t.same(Object.keys(res.json()).sort(), ['health', 'status', 'timestamp']);
  t.equal(res.json().status, 'ok');
  t.ok(!Number.isNaN(Date.parse(res.json().timestamp)));
});

t.test(
  "backend /health asks the agents service whether its runtime's engine answers, as a service, and reports the kill switch",
  async (t) => {
    let engine: { driver: string; reachable: boolean } = { driver: 'kubernetes', reachable: true };
    const callers: (Identity | null)[] = [];
    const agents = createServer((req, res) => {
      callers.push(verifyIdentity(String(req.headers[IDENTITY_HEADER] ?? ''), process.env.IDENTITY_SECRET!));
      res.writeHead(req.url === '/api/runtime/version' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...engine,
          engine: 'kubernetes',
          version: 'v1.34.1',
          image: 'agent:1',
          deployedAt: new Date().toISOString(),
        }),
      );
    });
    agents.listen(0, '127.0.0.1');
    await once(agents, 'listening');
    t.teardown(() => agents.close());
    const up = await buildEdge(t, 'backend', `http://127.0.0.1:${(agents.address() as AddressInfo).port}`, {
      PROVISIONING_ENABLED: 'false',
      RUNTIME_DRIVER: 'docker',
    });
    const res = await up.inject({ method: 'GET', url: '/health' });
    t.equal(res.statusCode, 200);
    t.match(
      res.json(),
      // A pattern, not a string: tap's string match would take 'unavailable' too.
      { status: /^ok$/, docker: /^available$/, provisioning: /^disabled$/, provider: /^kubernetes$/ },
      "the agents service's driver, not the edge's setting",
    );
    t.same(res.json().dependencies, { postgres: 'ok', redis: 'ok' }, "the edge's own PostgreSQL and Redis answer");
    t.has(
      callers.at(-1),
      { surface: 'backend', auth: 'service', userId: null },
      'asked with a signed service identity',
    );
    engine = { driver: 'kubernetes', reachable: false };
    t.has(
      (await up.inject({ method: 'GET', url: '/health' })).json(),
      { docker: 'unavailable', provider: 'kubernetes' },
      'the engine does not answer',
    );
    const down = await buildEdge(t, 'backend', 'http://127.0.0.1:9', { RUNTIME_DRIVER: 'docker' });
    t.has(
      (await down.inject({ method: 'GET', url: '/health' })).json(),
      { status: 'ok', docker: 'unavailable', provisioning: 'enabled', provider: 'docker' },
      'the agents service down',
    );
  },
);

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
