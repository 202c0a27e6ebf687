import t from 'tap';
import { buildEdge, echoRoutes, startEchoService } from './helper.ts';
import { agentRoutes } from '../src/plugins/routing.ts';

const key = process.env.INTERNAL_API_KEY!;

t.test('backend surface: the internal API-key check', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'backend', upstream, { ADMIN_EMAILS: 'ops@agentyard.dev' });
  const call = (authorization?: string) =>
    edge.inject({ method: 'GET', url: '/echo', headers: authorization ? { authorization } : {} });

  for (const [authorization, status, error] of [
    [undefined, 401, 'Unauthorized'],
    ['Basic abc', 401, 'Unauthorized'],
    [key, 401, 'Unauthorized'],
    ['Bearer wrong', 403, 'Forbidden'],
    [`Bearer ${key}x`, 403, 'Forbidden'],
  ] as const) {
    const res = await call(authorization);
    t.equal(res.statusCode, status, String(authorization));
    t.same(res.json(), { error });
  }
  const ok = await edge.inject({
    method: 'GET',
    url: '/echo',
    headers: { authorization: `Bearer ${key}`, 'x-user-id': 'u-42', 'x-user-email': 'OPS@agentyard.dev' },
  });
  t.equal(ok.statusCode, 200);
  const seen = ok.json();
  t.has(seen.identity, {
    surface: 'backend',
    auth: 'service',
    userId: 'u-42',
    email: 'OPS@agentyard.dev',
    admin: true,
  });
  t.notOk(seen.headers.authorization, 'the key is not passed on');
  t.equal(seen.headers['x-user-id'], 'u-42', 'user context headers reach backend services');
});

t.test('an unset server key answers 500 Server misconfigured', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'backend', upstream, { INTERNAL_API_KEY: '' });
  const res = await edge.inject({ method: 'GET', url: '/echo', headers: { authorization: 'Bearer anything' } });
  t.equal(res.statusCode, 500);
  t.same(res.json(), { error: 'Server misconfigured' });
});

t.test('keyless backend routes pass without a key; a forwarded bearer reaches its service', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'backend', upstream);
  const keyless = await edge.inject({ method: 'GET', url: '/keyless' });
  t.equal(keyless.statusCode, 200);
  t.has(keyless.json().identity, { surface: 'backend', auth: 'none', userId: null });
  const bearer = await edge.inject({ method: 'GET', url: '/bearer', headers: { authorization: 'Bearer ag_agentkey' } });
  t.equal(bearer.json().headers.authorization, 'Bearer ag_agentkey');
});

t.test('a service refuses a caller the edge did not sign, even one that forges the header', async (t) => {
  const upstream = await startEchoService(t);
  const direct = await fetch(`${upstream}/echo`, {
    headers: { 'x-agentyard-identity': 'v1.eyJ1c2VySWQiOiJ4In0.c2ln' },
  });
  t.equal(direct.status, 401);
  const edge = await buildEdge(t, 'backend', upstream);
  const res = await edge.inject({ method: 'GET', url: '/keyless', headers: { 'x-agentyard-identity': 'forged' } });
  t.equal(res.statusCode, 200, 'the edge replaces whatever identity header the client sent');
  t.equal(res.json().identity.auth, 'none');
});

t.test('the agent listener serves only the backend routes that need no key', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'backend', upstream, {}, agentRoutes(echoRoutes));
  t.same(
    agentRoutes(echoRoutes).map((spec) => spec.url),
    ['/keyless', '/bearer'],
  );
  t.equal((await edge.inject({ method: 'GET', url: '/keyless' })).statusCode, 200);
  const keyed = await edge.inject({
    method: 'GET',
    url: '/echo',
    headers: { authorization: `Bearer ${process.env.INTERNAL_API_KEY}` },
  });
  t.equal(keyed.statusCode, 404, 'a keyed route is not there, even with the key');
  t.ok(
    agentRoutes().some((spec) => spec.url === '/v1/chat/completions'),
    'agents reach the AI gateway',
  );
});
