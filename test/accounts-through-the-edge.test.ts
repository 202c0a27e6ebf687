import t from 'tap';
import { startPlatform, uniqueEmail } from '@agentyard/testing';

// Real processes: the auth service and the edge, over HTTP on loopback.
const platform = await startPlatform(['auth'], { RATE_LIMITS: 'web-register=1000' });
t.teardown(() => platform.stop());

const web = (path: string, init: RequestInit & { cookie?: string } = {}) => {
  const headers = new Headers(init.headers);
  if (init.body) headers.set('content-type', 'application/json');
  if (init.cookie) headers.set('cookie', init.cookie);
  return fetch(`${platform.webUrl}${path}`, { ...init, headers });
};
const cookieOf = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('agentyard-session='));
type SessionBody = { user: { id: string; name: string } };

t.test('register → login → session → settings → password change → signout', async (t) => {
  const email = uniqueEmail('e2e');
  const registered = await web('/api/register', {
    method: 'POST',
    body: JSON.stringify({ email, password: 'first password', name: 'Eve' }),
  });
  t.equal(registered.status, 201);
  t.notOk(cookieOf(registered), 'register creates no session');
  const user = (await registered.json()) as { id: string };
  t.match(registered.headers.get('x-request-id'), /.{8,}/);
  t.match(registered.headers.get('ratelimit-limit'), '1000');

  const login = await web('/api/auth/login', {
    method: 'POST',
    body: JSON.stringify({ email: email.toUpperCase(), password: 'first password' }),
  });
  t.equal(login.status, 200);
  t.same(await login.json(), { ok: true, user: { id: user.id, name: 'Eve', emailVerified: false } });
  const setCookie = cookieOf(login)!;
  t.match(setCookie, /; Max-Age=2592000; Path=\/; Expires=.+; HttpOnly; SameSite=Lax$/);
  t.notMatch(setCookie, /Secure/, 'not Secure over plain http');
  const cookie = setCookie.split(';')[0]!;

  const session = await web('/api/auth/session', { cookie });
  t.same(await session.json(), { user: { id: user.id, name: 'Eve', email, isAdmin: false, emailVerified: false } });

  const settings = await web('/api/settings', { cookie });
  t.has(await settings.json(), { id: user.id, name: 'Eve', email, isAdmin: false, plan: 'free' });
  const renamed = await web('/api/settings', { method: 'PATCH', cookie, body: JSON.stringify({ name: '  Eve Ng ' }) });
  t.equal(renamed.status, 200);
  t.equal(((await renamed.json()) as { name: string }).name, 'Eve Ng');
  t.equal(((await (await web('/api/auth/session', { cookie })).json()) as SessionBody).user.name, 'Eve Ng');

  // A second session (another device) ends when the password changes; the current one stays.
  const other = cookieOf(
    await web('/api/auth/login', { method: 'POST', body: JSON.stringify({ email, password: 'first password' }) }),
  )!.split(';')[0]!;
  const wrong = await web('/api/settings/password', {
    method: 'POST',
    cookie,
    body: JSON.stringify({ currentPassword: 'nope nope', newPassword: 'second password' }),
  });
  t.equal(wrong.status, 400);
  const changed = await web('/api/settings/password', {
    method: 'POST',
    cookie,
    body: JSON.stringify({ currentPassword: 'first password', newPassword: 'second password' }),
  });
  t.equal(changed.status, 200);
  t.same(await changed.json(), { success: true });
  t.same(await (await web('/api/auth/session', { cookie: other })).json(), { user: null }, 'the other session ended');
  t.equal(
    ((await (await web('/api/auth/session', { cookie })).json()) as SessionBody).user.id,
    user.id,
    'the current session stays',
  );
  t.equal(
    (await web('/api/auth/login', { method: 'POST', body: JSON.stringify({ email, password: 'first password' }) }))
      .status,
    401,
  );

  const signout = await web('/api/auth/signout', { method: 'POST', cookie });
  t.equal(signout.status, 200);
  t.same(await signout.json(), { ok: true });
  t.match(cookieOf(signout), /^agentyard-session=; Max-Age=0/);
  t.same(
    await (await web('/api/auth/session', { cookie })).json(),
    { user: null },
    'signed out on the very next request',
  );
  t.equal((await web('/api/settings', { cookie })).status, 401);
  t.equal((await web('/api/auth/signout', { method: 'POST' })).status, 200, 'signout always 200');
});

t.test('cross-site writes with the cookie are refused; backend surface needs the key', async (t) => {
  const email = uniqueEmail('csrf');
  await web('/api/register', { method: 'POST', body: JSON.stringify({ email, password: 'long enough' }) });
  const cookie = cookieOf(
    await web('/api/auth/login', { method: 'POST', body: JSON.stringify({ email, password: 'long enough' }) }),
  )!.split(';')[0]!;
  const res = await web('/api/settings', {
    method: 'PATCH',
    cookie,
    headers: { origin: 'https://evil.example' },
    body: JSON.stringify({ name: 'pwned' }),
  });
  t.equal(res.status, 403);
  t.same(await res.json(), { error: 'Cross-site request refused', code: 'CSRF' });
  const health = await fetch(`${platform.backendUrl}/health`);
  t.equal(health.status, 200);
  t.has(await health.json(), { status: 'ok', provisioning: 'enabled' });
});
