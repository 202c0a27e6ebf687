import t from 'tap';
import { createServer as createHttpServer } from 'node:http';
import { identityHeaders, systemDb, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';

// Signed per request: a signed identity lives 30 s, and a file on a loaded machine runs longer.
const anonymous = () => identityHeaders();

async function register(app: Awaited<ReturnType<typeof build>>, body: object) {
  return app.inject({ method: 'POST', url: '/api/register', headers: anonymous(), payload: body });
}

t.test('requests without a signed identity header are refused', async (t) => {
  const app = await build(t);
  const res = await app.inject({ method: 'GET', url: '/api/auth/session' });
  t.equal(res.statusCode, 401);
  t.same(res.json(), { error: 'Unauthorized' });
  const forged = await app.inject({
    method: 'GET',
    url: '/api/auth/session',
    headers: { 'x-agentyard-identity': 'v1.e30.AAAA' },
  });
  t.equal(forged.statusCode, 401);
});

t.test('register creates a user, defaults the name to the email, and no session', async (t) => {
  const app = await build(t);
  const email = uniqueEmail('Reg');
  const res = await register(app, { email, password: 'correct horse' });
  t.equal(res.statusCode, 201);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['email', 'emailVerified', 'id', 'name']);
  t.equal(body.emailVerified, false, 'nobody proved the address yet');
  t.equal(body.email, email.toLowerCase());
  t.equal(body.name, email.toLowerCase());
  t.notOk(res.headers['set-cookie'], 'no session cookie');
  const row = await systemDb()
    .selectFrom('users')
    .select(['password_hash'])
    .where('id', '=', body.id)
    .executeTakeFirstOrThrow();
  t.match(row.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, 'argon2id with OWASP parameters');
  const sessions = await systemDb().selectFrom('sessions').select('id').where('user_id', '=', body.id).execute();
  t.equal(sessions.length, 0);
});

t.test('register rules: email, password length, referral code, duplicates (case-insensitive)', async (t) => {
  const app = await build(t);
  const email = uniqueEmail();
  const cases: [object, number, RegExp][] = [
    [{ password: 'longenough' }, 400, /email/],
    [{ email }, 400, /password/],
    [{ email: 'not-an-email', password: 'longenough' }, 400, /Invalid email/],
    [{ email, password: 'short' }, 400, /at least 8/],
    [{ email, password: 'longenough', referralCode: 'has space' }, 400, /referral code/],
    [{ email, password: 'longenough', referralCode: 'a'.repeat(21) }, 400, /referral code/],
    [{ email, password: 12345678 }, 400, /password/],
  ];
  for (const [payload, status, message] of cases) {
    const res = await register(app, payload);
    t.equal(res.statusCode, status, JSON.stringify(payload));
    t.match(res.json().error, message);
  }
  t.equal(
    (await register(app, { email, password: 'longenough', name: 'Ann', referralCode: 'Friend-2026' })).statusCode,
    201,
  );
  const row = await systemDb()
    .selectFrom('users')
    .select(['referral_code', 'name'])
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  t.same(row, { referral_code: 'FRIEND-2026', name: 'Ann' });
  const again = await register(app, { email: email.toUpperCase(), password: 'longenough' });
  t.equal(again.statusCode, 409);
  t.same(again.json(), { error: 'User already exists' });
});

t.test('bot detection: the honeypot field, then a configured captcha verifier', async (t) => {
  const app = await build(t);
  const honeypot = await register(app, { email: uniqueEmail(), password: 'longenough', website: 'http://spam' });
  t.equal(honeypot.statusCode, 403);
  t.equal(honeypot.json().code, 'BOT_DETECTED');

  const seen: string[] = [];
  const verifier = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push(form.get('secret') ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: form.get('response') === 'human' }));
    });
  });
  await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
  t.teardown(() => verifier.close());
  const captchaApp = await build(t, {
    CAPTCHA_VERIFY_URL: `http://127.0.0.1:${(verifier.address() as { port: number }).port}/siteverify`,
    CAPTCHA_SECRET: 'captcha-secret',
  });
  t.equal((await register(captchaApp, { email: uniqueEmail(), password: 'longenough' })).statusCode, 403, 'no token');
  t.equal(
    (await register(captchaApp, { email: uniqueEmail(), password: 'longenough', captchaToken: 'robot' })).statusCode,
    403,
    'rejected token',
  );
  t.equal(
    (await register(captchaApp, { email: uniqueEmail(), password: 'longenough', captchaToken: 'human' })).statusCode,
    201,
    'accepted token',
  );
  t.same(seen, ['captcha-secret', 'captcha-secret']);
});

t.test('login: missing fields 400, wrong password or unknown email 401, email case-insensitive', async (t) => {
  const app = await build(t);
  const email = uniqueEmail();
  await register(app, { email, password: 'correct horse', name: 'Bo' });
  const login = (payload: object) =>
    app.inject({ method: 'POST', url: '/api/auth/login', headers: anonymous(), payload });
  t.equal((await login({ email })).statusCode, 400);
  t.equal((await login({ password: 'x' })).statusCode, 400);
  for (const payload of [
    { email, password: 'wrong horse' },
    { email: uniqueEmail(), password: 'correct horse' },
  ]) {
    const res = await login(payload);
    t.equal(res.statusCode, 401);
    t.same(res.json(), { error: 'Invalid email or password' });
  }
  const ok = await login({ email: email.toUpperCase(), password: 'correct horse' });
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { ok: true, user: { id: ok.json().user.id, name: 'Bo', emailVerified: false } });
  const cookie = String(ok.headers['set-cookie']);
  t.match(
    cookie,
    /^agentyard-session=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/,
  );
  const token = cookie.split(';')[0]!.split('=')[1]!;
  const stored = await systemDb()
    .selectFrom('sessions')
    .select('token_hash')
    .where('user_id', '=', ok.json().user.id)
    .execute();
  t.equal(stored.length, 1);
  t.not(stored[0]!.token_hash, token, 'only the hash is stored');
});

t.test('session answers the signed-in user with isAdmin and emailVerified, or null; always 200', async (t) => {
  const admin = uniqueEmail('admin');
  const app = await build(t, { ADMIN_EMAILS: `someone@else.test, ${admin.toUpperCase()}` });
  const user = (await register(app, { email: admin, password: 'longenough' })).json();
  const session = () =>
    app.inject({
      method: 'GET',
      url: '/api/auth/session',
      headers: identityHeaders({ userId: user.id, email: admin, auth: 'session' }),
    });
  const before = await session();
  t.equal(before.statusCode, 200);
  t.same(
    before.json(),
    { user: { id: user.id, name: admin, email: admin, isAdmin: false, emailVerified: false } },
    'a listed address someone registered is no admin until verified',
  );
  await systemDb().updateTable('users').set({ email_verified_at: new Date() }).where('id', '=', user.id).execute();
  const res = await session();
  t.same(res.json(), { user: { id: user.id, name: admin, email: admin, isAdmin: true, emailVerified: true } });
  const settings = await app.inject({
    method: 'GET',
    url: '/api/settings',
    headers: identityHeaders({ userId: user.id, email: admin }),
  });
  t.match(settings.json(), { isAdmin: true, emailVerified: true });
  const none = await app.inject({ method: 'GET', url: '/api/auth/session', headers: anonymous() });
  t.same(none.json(), { user: null });
});

t.test(
  'under NODE_ENV=development a listed address is admin before it is verified (a fresh npm start has its admin)',
  async (t) => {
    const admin = uniqueEmail('dev-admin');
    const app = await build(t, { NODE_ENV: 'development', ADMIN_EMAILS: admin });
    const user = (await register(app, { email: admin, password: 'longenough' })).json();
    const res = await app.inject({
      method: 'GET',
      url: '/api/auth/session',
      headers: identityHeaders({ userId: user.id, email: admin, auth: 'session' }),
    });
    t.same(res.json(), { user: { id: user.id, name: admin, email: admin, isAdmin: true, emailVerified: false } });
  },
);

t.test('addresses @wallet.agentyard are reserved for wallet sign-in: registration refuses them', async (t) => {
  const app = await build(t);
  for (const email of [
    '0x1111111111111111111111111111111111111111@wallet.agentyard',
    ' 0xABCDEF0000000000000000000000000000000000@Wallet.Agentyard ',
  ]) {
    const res = await register(app, { email, password: 'longenough' });
    t.equal(res.statusCode, 400, email);
    t.same(res.json(), { error: 'Addresses @wallet.agentyard are reserved for wallet sign-in' });
  }
  const rows = await systemDb()
    .selectFrom('users')
    .select('id')
    .where('email', 'like', '%@wallet.agentyard')
    .where('name', '=', '0x1111111111111111111111111111111111111111@wallet.agentyard')
    .execute();
  t.equal(rows.length, 0, 'nobody was created');
});
