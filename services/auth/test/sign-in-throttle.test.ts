import t from 'tap';
import { Redis } from 'ioredis';
import { identityHeaders, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';
import { delayAfter, SIGN_IN_THROTTLE, SignInThrottle } from '../src/domain/sign-in-throttle.ts';

type App = Awaited<ReturnType<typeof build>>;
const login = (app: App, email: string, password: string) => app.inject({ method: 'POST', url: '/api/auth/login', headers: identityHeaders(), payload: { email, password } });
const register = (app: App, email: string, password: string) => app.inject({ method: 'POST', url: '/api/register', headers: identityHeaders(), payload: { email, password } });

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

t.test('after five wrong passwords the account waits, even with the right password, in every auth process', async (t) => {
  const app = await build(t, SLOW);
  const other = await build(t, SLOW);
  const email = uniqueEmail('throttled');
  t.equal((await register(app, email, 'the right password')).statusCode, 201);
  for (let i = 0; i < 5; i++) t.equal((await login(app, email, 'a wrong password')).statusCode, 401, `failure ${i + 1} is free`);
  for (const [name, instance, password] of [
    ['right password', app, 'the right password'],
    ['another process', other, 'the right password'],
    ['wrong password', app, 'a wrong password'],
  ] as const) {
    const res = await login(instance, email.toUpperCase(), password);
    t.equal(res.statusCode, 429, name);
    t.ok(Number(res.headers['retry-after']) > 50 && Number(res.headers['retry-after']) <= 60, `${name}: Retry-After in seconds`);
    t.same(res.json(), { error: `Too many failed sign-ins for this account: try again in ${res.headers['retry-after']} s`, code: 'SIGN_IN_THROTTLED' }, name);
  }
});

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
  for (let i = 0; i < 5; i++) t.equal(await throttle.admit(email), null);
  const ttl = await redis.pttl(throttle.key(email));
  t.ok(ttl > SIGN_IN_THROTTLE.forgetAfterMs && ttl <= SIGN_IN_THROTTLE.forgetAfterMs + 60_000, `expires on its own (${ttl} ms)`);
  const wait = await throttle.admit(email);
  t.ok(wait !== null && wait > 50 && wait <= 60, 'the sixth waits');
  t.notOk((await redis.keys(`*${email}*`)).length, 'the address itself is not in Redis');
});
