import t, { type Test } from 'tap';
import { hashToken } from '@agentyard/crypto';
import { identityHeaders, startRelay, systemDb, uniqueEmail } from '@agentyard/testing';
import { build, startWorkers } from './helper.ts';
import type { AuthWorkers } from '../src/workers.ts';
import { isResetMail, startMailServer, tokenIn } from './mail-server.ts';

/** The next reset job the email worker finishes, with its outcome (registrations queue verification mail too). */
function nextEmailJob(workers: AuthWorkers): Promise<string> {
  return new Promise((resolve, reject) => {
    const completed = (job: { name: string }, result: unknown) => {
      if (job.name === 'password-reset') {
        off();
        resolve(result as string);
      }
    };
    const failed = (job: { name: string } | undefined, error: Error) => {
      if (job?.name === 'password-reset') {
        off();
        reject(error);
      }
    };
    const off = () => {
      workers.email.off('completed', completed as never);
      workers.email.off('failed', failed as never);
    };
    workers.email.on('completed', completed as never);
    workers.email.on('failed', failed as never);
  });
}

async function setup(t: Test) {
  const mail = await startMailServer(t);
  // A first sign-in wait no loaded machine outlasts between two requests of a test.
  const env = {
    SMTP_URL: mail.url,
    EMAIL_FROM: 'Agentyard <no-reply@agentyard.test>',
    SIGN_IN_FIRST_DELAY_SECONDS: '60',
  };
  const app = await build(t, env);
  const workers = await startWorkers(t, env);
  const post = (url: string, payload: object) =>
    app.inject({ method: 'POST', url, headers: identityHeaders(), payload });
  return { app, workers, mail, post };
}

t.test('forgot-password mails a single-use link; reset sets the password and ends every session', async (t) => {
  const { workers, mail, post } = await setup(t);
  const email = uniqueEmail('reset');
  const registered = (await post('/api/register', { email, password: 'old password' })).json();
  for (let i = 0; i < 2; i++)
    t.equal((await post('/api/auth/login', { email, password: 'old password' })).statusCode, 200);

  const delivered = mail.nextMail(isResetMail);
  const done = nextEmailJob(workers);
  const res = await post('/api/auth/forgot-password', { email: email.toUpperCase() });
  t.equal(res.statusCode, 200);
  t.same(res.json(), {
    success: true,
    message: 'If an account exists for that email, a password reset link is on its way.',
  });
  t.equal(await done, 'sent');
  const message = await delivered;
  t.same(message.to, [email.toLowerCase()]);
  t.equal(message.from, 'no-reply@agentyard.test');
  const token = tokenIn(message.raw);
  t.ok(token, 'the mail holds a reset link');
  t.match(message.raw, new RegExp(`${process.env.PUBLIC_BASE_URL!.replace(/[.:/]/g, '\\$&')}/reset-password\\?token=`));

  const reset = await systemDb()
    .selectFrom('password_resets')
    .selectAll()
    .where('user_id', '=', registered.id)
    .executeTakeFirstOrThrow();
  t.equal(reset.token_hash, hashToken(token!), 'stored hashed');
  const ttl = new Date(reset.expires_at).getTime() - new Date(reset.created_at).getTime();
  t.ok(Math.abs(ttl - 3600_000) < 5000, 'expires in an hour');
  t.equal(
    (
      await systemDb()
        .selectFrom('password_reset_requests')
        .select('id')
        .where('email', '=', email.toLowerCase())
        .execute()
    ).length,
    0,
    'the request is gone once handled',
  );

  const short = await post('/api/auth/reset-password', { token, password: 'short' });
  t.equal(short.statusCode, 400);
  t.same(short.json(), { error: 'Password must be at least 8 characters' });

  const ok = await post('/api/auth/reset-password', { token, password: 'brand new password' });
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { success: true });
  t.equal(
    (await systemDb().selectFrom('sessions').select('id').where('user_id', '=', registered.id).execute()).length,
    0,
    'every session ended',
  );
  t.equal((await post('/api/auth/login', { email, password: 'old password' })).statusCode, 401);
  t.equal((await post('/api/auth/login', { email, password: 'brand new password' })).statusCode, 200);

  const again = await post('/api/auth/reset-password', { token, password: 'another password' });
  t.equal(again.statusCode, 400, 'single use');
  t.same(again.json(), { error: 'Invalid or expired reset token' });
});

t.test('the answer is the same whether or not the email has an account, and nobody gets mail', async (t) => {
  const { workers, mail, post } = await setup(t);
  const email = uniqueEmail('exists');
  await post('/api/register', { email, password: 'some password' });
  const nobody = uniqueEmail('nobody');

  let done = nextEmailJob(workers);
  const forUnknown = await post('/api/auth/forgot-password', { email: nobody });
  t.equal(await done, 'no account');
  done = nextEmailJob(workers);
  const forKnown = await post('/api/auth/forgot-password', { email });
  t.equal(await done, 'sent');
  t.equal(forUnknown.statusCode, forKnown.statusCode);
  t.equal(forUnknown.body, forKnown.body);
  t.same(
    mail.inbox.filter(isResetMail).map((m) => m.to),
    [[email.toLowerCase()]],
    'only the account holder got mail',
  );
});

t.test('expired and unknown tokens are refused and change nothing', async (t) => {
  const { workers, mail, post } = await setup(t);
  const email = uniqueEmail('expired');
  const user = (await post('/api/register', { email, password: 'some password' })).json();
  const delivered = mail.nextMail(isResetMail);
  const done = nextEmailJob(workers);
  await post('/api/auth/forgot-password', { email });
  await done;
  const token = tokenIn((await delivered).raw)!;
  await systemDb()
    .updateTable('password_resets')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('user_id', '=', user.id)
    .execute();
  for (const candidate of [token, 'not-a-token']) {
    const res = await post('/api/auth/reset-password', { token: candidate, password: 'brand new password' });
    t.equal(res.statusCode, 400);
    t.same(res.json(), { error: 'Invalid or expired reset token' });
  }
  t.equal(
    (await post('/api/auth/login', { email, password: 'some password' })).statusCode,
    200,
    'the password is unchanged',
  );
});

t.test('a suppressed address (bounced or complained) receives no reset mail', async (t) => {
  const { workers, mail, post } = await setup(t);
  const email = uniqueEmail('bounced');
  await post('/api/register', { email, password: 'some password' });
  await systemDb()
    .insertInto('email_suppressions')
    .values({ address: email.toLowerCase(), reason: 'bounced' })
    .execute();
  const done = nextEmailJob(workers);
  t.equal((await post('/api/auth/forgot-password', { email })).statusCode, 200);
  t.equal(await done, 'suppressed');
  t.equal(mail.inbox.length, 0, 'neither the reset nor the verification mail');
});

t.test('forgot-password has bot detection (honeypot)', async (t) => {
  const { post } = await setup(t);
  const res = await post('/api/auth/forgot-password', { email: uniqueEmail(), website: 'http://spam.example' });
  t.equal(res.statusCode, 403);
  t.same(res.json(), { error: 'Request blocked by bot detection', code: 'BOT_DETECTED' });
});

t.test(
  'forgot-password while the job queue is gone answers 503 with a message to try again, not an internal error',
  async (t) => {
    const relay = await startRelay(process.env.REDIS_URL!);
    const app = await build(t, { REDIS_URL: relay.url });
    await relay.goDown();
    const res = await app.inject({
      method: 'POST',
      url: '/api/auth/forgot-password',
      headers: identityHeaders(),
      payload: { email: uniqueEmail('queue-down') },
    });
    t.equal(res.statusCode, 503);
    t.same(res.json(), { error: 'Job queue unavailable, try again shortly' });
  },
);

t.test(
  'a reset ends every outstanding reset link of the user, verifies the address and clears the sign-in count',
  async (t) => {
    const { app, workers, mail, post } = await setup(t);
    const email = uniqueEmail('two-links');
    const user = (await post('/api/register', { email, password: 'some password' })).json();
    const links: string[] = [];
    for (let i = 0; i < 2; i++) {
      const delivered = mail.nextMail(isResetMail);
      const done = nextEmailJob(workers);
      await post('/api/auth/forgot-password', { email });
      t.equal(await done, 'sent');
      links.push(tokenIn((await delivered).raw)!);
    }
    for (let i = 0; i < 5; i++) await post('/api/auth/login', { email, password: 'a wrong password' });
    t.equal(
      (await post('/api/auth/login', { email, password: 'some password' })).statusCode,
      429,
      'the account waits after five failures',
    );

    t.equal(
      (await post('/api/auth/reset-password', { token: links[1], password: 'the newest password' })).statusCode,
      200,
    );
    const older = await post('/api/auth/reset-password', { token: links[0], password: 'an attacker password' });
    t.equal(older.statusCode, 400, 'the older link died with the reset');
    t.same(older.json(), { error: 'Invalid or expired reset token' });
    const login = await post('/api/auth/login', { email, password: 'the newest password' });
    t.equal(login.statusCode, 200, 'the reset cleared the wait');
    t.equal(login.json().user.emailVerified, true, 'a reset link proves the mailbox');
    const session = await app.inject({
      method: 'GET',
      url: '/api/auth/session',
      headers: identityHeaders({ userId: user.id, email, auth: 'session' }),
    });
    t.equal(session.json().user.emailVerified, true);
  },
);

t.test(
  'resetting an account whose address was never verified also removes its API keys (whoever made them never proved the address)',
  async (t) => {
    const { app, workers, mail, post } = await setup(t);
    const email = uniqueEmail('squatted');
    const squatter = (await post('/api/register', { email, password: 'squatter password' })).json();
    const key = await app.inject({
      method: 'POST',
      url: '/api/keys',
      headers: identityHeaders({ userId: squatter.id, email }),
      payload: { name: 'kept access' },
    });
    t.equal(key.statusCode, 201, key.body);
    const delivered = mail.nextMail(isResetMail);
    const done = nextEmailJob(workers);
    await post('/api/auth/forgot-password', { email });
    t.equal(await done, 'sent');
    t.equal(
      (
        await post('/api/auth/reset-password', {
          token: tokenIn((await delivered).raw),
          password: 'the owner password',
        })
      ).statusCode,
      200,
    );
    t.equal(
      (await systemDb().selectFrom('api_keys').select('id').where('user_id', '=', squatter.id).execute()).length,
      0,
      'no API key survives',
    );
  },
);
