import t, { type Test } from 'tap';
import { startPlatform, uniqueEmail } from '@agentyard/testing';

// Issue 27 N9: password changes (two argon2 runs each) had no rate limit, so one signed-in user kept
// the auth service's threads busy for everyone. Real processes: the auth service behind the edge,
// with the password-change scopes as configured by default.
const platform = await startPlatform(['auth'], { RATE_LIMITS: 'web-register=1000,web-login=1000' });
t.teardown(() => platform.stop());

const web = (path: string, init: RequestInit & { cookie?: string } = {}) => {
  const headers = new Headers(init.headers);
  if (init.body) headers.set('content-type', 'application/json');
  if (init.cookie) headers.set('cookie', init.cookie);
  return fetch(`${platform.webUrl}${path}`, { ...init, headers });
};
const signIn = (email: string, password: string) =>
  web('/api/auth/login', { method: 'POST', body: JSON.stringify({ email, password }) });

/** A registered user's session cookie. */
async function signedIn(t: Test, email: string, password: string): Promise<string> {
  t.equal((await web('/api/register', { method: 'POST', body: JSON.stringify({ email, password }) })).status, 201);
  const login = await signIn(email, password);
  t.equal(login.status, 200);
  return login.headers
    .getSetCookie()
    .find((c) => c.startsWith('agentyard-session='))!
    .split(';')[0]!;
}
const changePassword = (cookie: string, currentPassword: string, newPassword: string) =>
  web('/api/settings/password', { method: 'POST', cookie, body: JSON.stringify({ currentPassword, newPassword }) });

t.test("the sixth password change of a user in 15 minutes is refused at the edge; another user's is not", async (t) => {
  const email = uniqueEmail('changes');
  const cookie = await signedIn(t, email, 'password one');
  const passwords = ['password one', 'password two'];
  for (let n = 0; n < 5; n++) {
    const changed = await changePassword(cookie, passwords[n % 2]!, passwords[(n + 1) % 2]!);
    t.equal(changed.status, 200, `change ${n + 1}`);
  }
  const refused = await changePassword(cookie, 'password two', 'password three');
  t.equal(refused.status, 429, 'the sixth');
  t.same(await refused.json(), { error: 'Too many requests' });
  t.equal(refused.headers.get('ratelimit-limit'), '5');
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
  t.equal(
    (await signIn(email, 'password two')).status,
    200,
    'the refused change never reached the service: the password is the fifth',
  );

  const other = await signedIn(t, uniqueEmail('changes-other'), 'other password');
  t.equal(
    (await changePassword(other, 'other password', 'other password two')).status,
    200,
    'another user behind the same address changes theirs',
  );
});

t.test("while one user hammers password changes, another user's sign-in still succeeds", async (t) => {
  const hammering = await signedIn(t, uniqueEmail('hammer'), 'hammer password');
  const email = uniqueEmail('probe');
  await signedIn(t, email, 'probe password');
  const flood = Array.from({ length: 40 }, () => changePassword(hammering, 'hammer password', 'hammer password'));
  const probe = await signIn(email, 'probe password');
  t.equal(probe.status, 200, 'signed in during the flood');
  t.match(await probe.json(), { ok: true, user: { id: String } });
  t.ok(
    probe.headers
      .getSetCookie()
      .some((c) => c.startsWith('agentyard-session=') && !c.startsWith('agentyard-session=;')),
    'with a session',
  );
  const answers = await Promise.all(
    flood.map(async (pending) => {
      const answer = await pending;
      return { status: answer.status, body: (await answer.json()) as { error: string; code?: string } };
    }),
  );
  const atTheEdge = answers.filter(
    ({ status, body }) => status === 429 && body.error === 'Too many requests' && body.code === undefined,
  );
  t.ok(
    atTheEdge.length >= 35,
    `at least 35 of the 40 were refused at the edge, never reaching the auth service (${atTheEdge.length})`,
  );
});
