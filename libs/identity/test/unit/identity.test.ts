import t from 'tap';
import { signIdentity, verifyIdentity, sessionCookieOptions, isAdminEmail, type Identity } from '@agentyard/identity';

const secret = 'x'.repeat(40);
const identity: Identity = {
  surface: 'web',
  auth: 'session',
  userId: 'u1',
  email: 'a@b.c',
  admin: false,
  sessionId: 's1',
  keyId: null,
  requestId: 'r1',
};

t.test('a signed identity verifies until it expires', async (t) => {
  const header = signIdentity(identity, secret, 30, 1_000_000);
  t.same(verifyIdentity(header, secret, 1_000_000), identity);
  t.equal(verifyIdentity(header, secret, 1_000_000 + 31_000), null, 'expired');
});

t.test("a user key's id crosses the hop with it, and only with a user key", async (t) => {
  const keyed: Identity = { ...identity, auth: 'user-key', sessionId: null, keyId: 'k1' };
  t.same(verifyIdentity(signIdentity(keyed, secret), secret), keyed);
  t.equal(
    verifyIdentity(signIdentity({ ...keyed, auth: 'session' }, secret), secret)?.keyId,
    null,
    'a session carries no key',
  );
  const { keyId: _, ...older } = identity;
  t.equal(
    verifyIdentity(signIdentity(older as Identity, secret), secret)?.keyId,
    null,
    'an identity signed without one: null',
  );
});

t.test('a forged, re-signed or malformed header is refused', async (t) => {
  const header = signIdentity(identity, secret);
  const [v, payload, sig] = header.split('.');
  const tampered = Buffer.from(JSON.stringify({ ...identity, userId: 'u2', exp: 9e9 })).toString('base64url');
  t.equal(verifyIdentity(`${v}.${tampered}.${sig}`, secret), null, 'payload swapped');
  t.equal(verifyIdentity(signIdentity(identity, 'y'.repeat(40)), secret), null, 'other key');
  t.equal(verifyIdentity(`${v}.${payload}`, secret), null, 'no signature');
  t.equal(verifyIdentity('garbage', secret), null);
  t.equal(verifyIdentity(undefined, secret), null);
});

t.test('session cookie: HttpOnly, SameSite=Lax, Path=/, 30 days, Secure only over https', async (t) => {
  t.same(sessionCookieOptions('http://localhost:3000', 0), {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: false,
    maxAge: 2592000,
    expires: new Date(2592000 * 1000),
  });
  t.equal(sessionCookieOptions('https://agentyard.example').secure, true);
});

t.test('admins are matched case-insensitively', async (t) => {
  const admins = new Set(['boss@agentyard.dev']);
  t.ok(isAdminEmail(' Boss@AgentYard.dev ', admins));
  t.notOk(isAdminEmail('other@agentyard.dev', admins));
  t.notOk(isAdminEmail(null, admins));
});
