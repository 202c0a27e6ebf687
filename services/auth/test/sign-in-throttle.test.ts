import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { hashToken } from '@agentyard/crypto';
import { identityHeaders, systemDb, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';
import { clientNetwork, delayAfter, SIGN_IN_THROTTLE, SignInThrottle } from '../src/domain/sign-in-throttle.ts';

type App = Awaited<ReturnType<typeof build>>;
const login = (app: App, email: string, password: string) =>
  app.inject({ method: 'POST', url: '/api/auth/login', headers: identityHeaders(), payload: { email, password } });
const register = (app: App, email: string, password: string) =>
  app.inject({ method: 'POST', url: '/api/register', headers: identityHeaders(), payload: { email, password } });

t.test('the schedule: five free failures, then 1 s, 2 s, 4 s ... never more than 15 minutes', async (t) => {
  t.same(
    [0, 4, 5, 6, 7, 8].map((failures) => delayAfter(failures)),
    [0, 0, 1000, 2000, 4000, 8000],
  );
  t.equal(delayAfter(14), 512_000);
  t.equal(delayAfter(15), 15 * 60_000, 'capped');
  t.equal(delayAfter(10_000), 15 * 60_000);
});

// A first wait long enough that a loaded machine cannot outlast it between two requests of a test.
const SLOW = { SIGN_IN_FIRST_DELAY_SECONDS: '60' };

t.test(
  'after five wrong passwords the account waits, even with the right password, in every auth process',
  async (t) => {
    const app = await build(t, SLOW);
    const other = await build(t, SLOW);
    const email = uniqueEmail('throttled');
    t.equal((await register(app, email, 'the right password')).statusCode, 201);
    for (let i = 0; i < 5; i++)
      t.equal((await login(app, email, 'a wrong password')).statusCode, 401, `failure ${i + 1} is free`);
    for (const [name, instance, password] of [
      ['right password', app, 'the right password'],
      ['another process', other, 'the right password'],
      ['wrong password', app, 'a wrong password'],
    ] as const) {
      const res = await login(instance, email.toUpperCase(), password);
      t.equal(res.statusCode, 429, name);
      t.ok(
        Number(res.headers['retry-after']) > 50 && Number(res.headers['retry-after']) <= 60,
        `${name}: Retry-After in seconds`,
      );
      t.same(
        res.json(),
        {
          error: `Too many failed sign-ins for this account: try again in ${res.headers['retry-after']} s`,
          code: 'SIGN_IN_THROTTLED',
        },
        name,
      );
    }
  },
);

t.test('unknown emails are counted the same way, so the answers tell nothing about who has an account', async (t) => {
  const app = await build(t, SLOW);
  const nobody = uniqueEmail('nobody');
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await login(app, nobody, 'whatever password')).statusCode);
  t.same(statuses, [401, 401, 401, 401, 401, 429]);
});

t.test('a flood of concurrent attempts gets five password checks, the rest wait', async (t) => {
  const app = await build(t, SLOW);
  const email = uniqueEmail('flood');
  await register(app, email, 'the right password');
  const answers = await Promise.all(Array.from({ length: 20 }, () => login(app, email, 'a wrong password')));
  const statuses = answers.map((a) => a.statusCode).sort();
  t.same(statuses, [...Array(5).fill(401), ...Array(15).fill(429)]);
});

t.test('a success clears the count', async (t) => {
  const app = await build(t);
  const email = uniqueEmail('reset-count');
  await register(app, email, 'the right password');
  for (let i = 0; i < 4; i++) t.equal((await login(app, email, 'a wrong password')).statusCode, 401);
  t.equal((await login(app, email, 'the right password')).statusCode, 200);
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await login(app, email, 'a wrong password')).statusCode);
  t.same(statuses, [401, 401, 401, 401, 401], 'five free failures again');
});

t.test('the count forgets itself: it lives at most the current wait plus an hour after the last attempt', async (t) => {
  const redis = new Redis(process.env.REDIS_URL!);
  t.teardown(() => redis.disconnect());
  const throttle = new SignInThrottle(
    redis,
    `${process.env.QUEUE_PREFIX ?? 'agentyard'}-throttle-test`,
    (error) => {
      throw error;
    },
    { ...SIGN_IN_THROTTLE, firstDelayMs: 60_000 },
  );
  const email = uniqueEmail('forgets');
  const ip = '192.0.2.10';
  for (let i = 0; i < 5; i++) t.equal(await throttle.admit(email, ip), null);
  const ttl = await redis.pttl(await throttle.key(email, ip));
  t.ok(
    ttl > SIGN_IN_THROTTLE.forgetAfterMs && ttl <= SIGN_IN_THROTTLE.forgetAfterMs + 60_000,
    `expires on its own (${ttl} ms)`,
  );
  const wait = await throttle.admit(email, ip);
  t.ok(wait !== null && wait > 50 && wait <= 60, 'the sixth waits');
  t.notOk((await redis.keys(`*${email}*`)).length, 'the address itself is not in Redis');
  t.notOk((await redis.keys('*192.0.2*')).length, 'nor the network');
});

t.test('the client network of an address: the /24 of IPv4 (also IPv4-mapped), the /64 of IPv6', async (t) => {
  t.equal(clientNetwork('203.0.113.7'), '203.0.113.0/24');
  t.equal(clientNetwork('::ffff:203.0.113.200'), '203.0.113.0/24');
  t.equal(clientNetwork('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(clientNetwork('2001:db8:1:2::9'), '2001:db8:1:2::/64');
  t.equal(clientNetwork('2001:0db8::1'), '2001:db8:0:0::/64');
  t.equal(clientNetwork('::1'), '0:0:0:0::/64');
  t.equal(clientNetwork('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.equal(clientNetwork('64:ff9b:1:2::192.0.2.1'), '64:ff9b:1:2::/64');
});

// Addresses as the edge passes them on (X-Forwarded-For from loopback, which the auth service trusts).
const from = (ip: string) => ({ ...identityHeaders(), 'x-forwarded-for': ip });
const loginFrom = (app: App, ip: string, email: string, password: string) =>
  app.inject({ method: 'POST', url: '/api/auth/login', headers: from(ip), payload: { email, password } });

/** A reset link for the account, as the mailed one would carry (the token only its hash is stored of). */
async function resetLinkToken(userId: string, email: string): Promise<string> {
  const token = randomBytes(32).toString('hex');
  const request = await systemDb()
    .insertInto('password_reset_requests')
    .values({ id: randomUUID(), email })
    .returning('id')
    .executeTakeFirstOrThrow();
  await systemDb()
    .insertInto('password_resets')
    .values({
      user_id: userId,
      request_id: request.id,
      token_hash: hashToken(token),
      expires_at: new Date(Date.now() + 3_600_000),
    })
    .execute();
  return token;
}

t.test(
  'failures from one network lock the account out there only: the owner signs in from another, and a reset lifts the lock',
  async (t) => {
    const app = await build(t, SLOW);
    const email = uniqueEmail('network-lock');
    const registered = await register(app, email, 'the right password');
    t.equal(registered.statusCode, 201);
    for (let i = 0; i < 5; i++)
      t.equal(
        (await loginFrom(app, '203.0.113.7', email, 'a wrong password')).statusCode,
        401,
        `attacker failure ${i + 1}`,
      );
    const locked = await loginFrom(app, '203.0.113.99', email, 'the right password');
    t.equal(locked.statusCode, 429, 'the attacker network (same /24) is locked out, even with the right password');
    t.equal(locked.json().code, 'SIGN_IN_THROTTLED');
    const owner = await loginFrom(app, '198.51.100.4', email, 'the right password');
    t.equal(owner.statusCode, 200, 'the owner signs in from another network');
    t.ok(owner.headers['set-cookie'], 'with a session');
    t.equal((await loginFrom(app, '2001:db8:7:7::1', email, 'the right password')).statusCode, 200, 'and over IPv6');
    t.equal(
      (await loginFrom(app, '203.0.113.7', email, 'the right password')).statusCode,
      429,
      "the owner's success elsewhere does not free the attacker's network",
    );

    const reset = await app.inject({
      method: 'POST',
      url: '/api/auth/reset-password',
      headers: from('198.51.100.4'),
      payload: { token: await resetLinkToken(registered.json().id, email), password: 'a brand new password' },
    });
    t.equal(reset.statusCode, 200, 'the emailed reset link is not held back by the lock');
    t.equal(
      (await loginFrom(app, '203.0.113.7', email, 'a brand new password')).statusCode,
      200,
      'and a reset lifts the lock on every network',
    );
  },
);

t.test('a wrong current password in a password change counts as a failed sign-in of the account', async (t) => {
  const app = await build(t, SLOW);
  const email = uniqueEmail('change-lock');
  const user = (await register(app, email, 'the right password')).json() as { id: string };
  const change = (ip: string, currentPassword: string, newPassword = 'another new password') =>
    app.inject({
      method: 'POST',
      url: '/api/settings/password',
      headers: { ...identityHeaders({ userId: user.id, email }), 'x-forwarded-for': ip },
      payload: { currentPassword, newPassword },
    });
  t.equal((await change('203.0.113.7', 'the right password')).statusCode, 200, 'a right one changes it');
  for (let i = 0; i < 6; i++)
    t.equal(
      (await change('203.0.113.7', 'a wrong password', 'short')).statusCode,
      400,
      'a too short new one is refused first, uncounted',
    );
  for (let i = 0; i < 5; i++)
    t.equal((await change('203.0.113.7', 'a wrong password')).statusCode, 400, `wrong current password ${i + 1}`);
  const throttled = await change('203.0.113.7', 'another new password');
  t.equal(throttled.statusCode, 429, 'then the change waits, even with the right current password');
  t.match(throttled.json(), { error: /Too many failed sign-ins/, code: /^SIGN_IN_THROTTLED$/ });
  t.ok(Number(throttled.headers['retry-after']) > 0, 'Retry-After');
  t.equal(
    (await loginFrom(app, '203.0.113.8', email, 'another new password')).statusCode,
    429,
    'and so does sign-in from that network',
  );
  t.equal((await loginFrom(app, '198.51.100.4', email, 'another new password')).statusCode, 200, 'not from another');
});
