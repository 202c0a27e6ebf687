import t, { type Test } from 'tap';
import { startPlatform, uniqueEmail, type Platform } from '@agentyard/testing';

// The edge answers a known caller from memory (services/edge/src/plugins/known-callers.ts). Two
// platforms on one database and Redis, as two edge replicas are: a sign-out, a password change or
// a key deletion made through one edge is refused on the very next request through the other,
// whose copy of the caller was answered from memory until then.
const settings = { RATE_LIMITS: 'web-register=1000,web-login=1000' };
const first = await startPlatform(['auth'], settings);
t.teardown(() => first.stop());
// Its edge logs at info, so that the test can await the line saying callers are answered from memory.
const second = await startPlatform(['auth'], { ...settings, LOG_LEVEL: 'info' }, { logsOf: ['edge'] });
t.teardown(() => second.stop());
await second.logs.waitFor('edge', (line) => line.includes('callers answered from memory'), 60_000);

const call = (platform: Platform, path: string, init: RequestInit & { cookie?: string; key?: string } = {}) => {
  const headers = new Headers(init.headers);
  if (init.body) headers.set('content-type', 'application/json');
  if (init.cookie) headers.set('cookie', init.cookie);
  if (init.key) headers.set('authorization', `Bearer ${init.key}`);
  return fetch(`${platform.webUrl}${path}`, { ...init, headers });
};

async function signIn(t: Test, email: string, password: string): Promise<string> {
  const login = await call(first, '/api/auth/login', { method: 'POST', body: JSON.stringify({ email, password }) });
  t.equal(login.status, 200);
  return login.headers
    .getSetCookie()
    .find((c) => c.startsWith('agentyard-session='))!
    .split(';')[0]!;
}

async function registered(t: Test, password: string): Promise<string> {
  const email = uniqueEmail('across-edges');
  t.equal(
    (await call(first, '/api/register', { method: 'POST', body: JSON.stringify({ email, password }) })).status,
    201,
  );
  return email;
}

/** The second edge's count of callers it looked up in the database, by kind. */
async function databaseLookups(kind: 'session' | 'user-key'): Promise<number> {
  const text = await (await fetch(`${second.opsUrls.edge}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`edge_identity_database_lookups_total{kind="${kind}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Two calls through the second edge: the first looks the caller up, the second is answered from memory. */
async function knownToSecondEdge(t: Test, kind: 'session' | 'user-key', request: () => Promise<Response>) {
  t.equal((await request()).status, 200);
  const before = await databaseLookups(kind);
  t.equal((await request()).status, 200);
  t.equal(await databaseLookups(kind), before, 'the second edge answered the caller from memory');
}

t.test('signed out through one edge, refused on the very next request through the other', async (t) => {
  const email = await registered(t, 'password one');
  const cookie = await signIn(t, email, 'password one');
  await knownToSecondEdge(t, 'session', () => call(second, '/api/settings', { cookie }));
  t.equal((await call(first, '/api/auth/signout', { method: 'POST', cookie })).status, 200);
  t.equal((await call(second, '/api/settings', { cookie })).status, 401);
  t.same(await (await call(second, '/api/auth/session', { cookie })).json(), { user: null });
});

t.test("a password changed through one edge ends the user's other sessions on the other at once", async (t) => {
  const email = await registered(t, 'password one');
  const other = await signIn(t, email, 'password one');
  const changing = await signIn(t, email, 'password one');
  await knownToSecondEdge(t, 'session', () => call(second, '/api/settings', { cookie: other }));
  const changed = await call(first, '/api/settings/password', {
    method: 'POST',
    cookie: changing,
    body: JSON.stringify({ currentPassword: 'password one', newPassword: 'password two' }),
  });
  t.equal(changed.status, 200);
  t.equal((await call(second, '/api/settings', { cookie: other })).status, 401, 'the other session is over');
  t.equal(
    (await call(second, '/api/settings', { cookie: changing })).status,
    200,
    'the session that changed it goes on',
  );
});

t.test('an API key deleted through one edge is refused on the very next request through the other', async (t) => {
  const email = await registered(t, 'password one');
  const cookie = await signIn(t, email, 'password one');
  const created = await call(first, '/api/keys', { method: 'POST', cookie, body: JSON.stringify({ name: 'script' }) });
  t.equal(created.status, 201);
  const { id, key } = (await created.json()) as { id: string; key: string };
  await knownToSecondEdge(t, 'user-key', () => call(second, '/api/settings', { key }));
  t.equal((await call(first, `/api/keys/${id}`, { method: 'DELETE', cookie })).status, 200);
  t.equal((await call(second, '/api/settings', { key })).status, 401);
});
