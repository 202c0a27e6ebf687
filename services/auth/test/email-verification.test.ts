import t, { type Test } from 'tap';
import { hashToken } from '@agentyard/crypto';
import { createUserRow, identityHeaders, startRelay, systemDb, uniqueEmail } from '@agentyard/testing';
import { build, startWorkers } from './helper.ts';
import type { AuthWorkers } from '../src/workers.ts';
import { isVerificationMail, startMailServer, unfold, verificationTokenIn } from './mail-server.ts';

/** The outcome of the next verification mail job the worker finishes. */
function nextVerificationJob(workers: AuthWorkers): Promise<string> {
  return new Promise((resolve, reject) => {
    const completed = (job: { name: string }, result: unknown) => {
      if (job.name === 'email-verification') {
        off();
        resolve(result as string);
      }
    };
    const failed = (job: { name: string } | undefined, error: Error) => {
      if (job?.name === 'email-verification') {
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

t.setTimeout(300_000); // every registration hashes a password and mails through the queue: slow on a loaded machine

async function setup(t: Test) {
  const mail = await startMailServer(t);
  const env = { SMTP_URL: mail.url, EMAIL_FROM: 'Agentyard <no-reply@agentyard.test>' };
  const app = await build(t, env);
  const workers = await startWorkers(t, env);
  const post = (url: string, payload?: object, headers = identityHeaders()) =>
    app.inject({ method: 'POST', url, headers, payload });
  /** Registers and returns the user and the token of the link mailed to them. */
  const registerAndReadMail = async (email: string) => {
    const delivered = mail.nextMail(isVerificationMail);
    const done = nextVerificationJob(workers);
    const res = await post('/api/register', { email, password: 'a good password' });
    t.equal(res.statusCode, 201, res.body);
    t.equal(await done, 'sent');
    const message = await delivered;
    return { user: res.json() as { id: string; email: string }, token: verificationTokenIn(message.raw)!, message };
  };
  const session = async (userId: string) =>
    (
      await app.inject({
        method: 'GET',
        url: '/api/auth/session',
        headers: identityHeaders({ userId, auth: 'session' }),
      })
    ).json().user;
  return { app, workers, mail, post, registerAndReadMail, session };
}

t.test('registration mails a single-use link; opening it verifies the address; only its hash is stored', async (t) => {
  const { post, registerAndReadMail, session } = await setup(t);
  const email = uniqueEmail('verify');
  const { user, token, message } = await registerAndReadMail(email);
  t.same(message.to, [email.toLowerCase()]);
  t.match(
    unfold(message.raw),
    new RegExp(`${process.env.PUBLIC_BASE_URL!.replace(/[.:/]/g, '\\$&')}/verify-email\\?token=`),
  );
  t.match(token, /^[A-Za-z0-9_-]{43}$/);
  const row = await systemDb()
    .selectFrom('email_verifications')
    .selectAll()
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  t.equal(row.token_hash, hashToken(token), 'stored hashed');
  t.notOk(JSON.stringify(row).includes(token), 'never in clear');
  const ttl = new Date(row.expires_at!).getTime() - Date.now();
  t.ok(ttl > 23 * 3600_000 && ttl <= 24 * 3600_000, 'expires in a day');
  t.equal((await session(user.id)).emailVerified, false);

  const res = await post('/api/auth/verify-email', { token });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { success: true });
  t.equal((await session(user.id)).emailVerified, true);

  const again = await post('/api/auth/verify-email', { token });
  t.equal(again.statusCode, 410, 'single use');
  t.match(again.json(), { error: /expired, was used/ });
});

t.test('unknown tokens are 400, expired ones 410, and neither verifies anything', async (t) => {
  const { post, registerAndReadMail, session } = await setup(t);
  const { user, token } = await registerAndReadMail(uniqueEmail('expired'));
  const unknown = await post('/api/auth/verify-email', { token: 'a-token-nobody-issued-0123456789abcdefghijk' });
  t.equal(unknown.statusCode, 400);
  t.same(unknown.json(), { error: 'Invalid verification token' });
  await systemDb()
    .updateTable('email_verifications')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('user_id', '=', user.id)
    .execute();
  const expired = await post('/api/auth/verify-email', { token });
  t.equal(expired.statusCode, 410);
  t.equal((await session(user.id)).emailVerified, false);
  for (const payload of [{}, { token: '' }, { token: 'x'.repeat(300) }, { token: 'ok', extra: 1 }]) {
    t.equal((await post('/api/auth/verify-email', payload)).statusCode, 400, JSON.stringify(payload).slice(0, 40));
  }
});

t.test('resend mails a fresh link and the earlier ones stop working', async (t) => {
  const { post, registerAndReadMail, session, mail, workers } = await setup(t);
  const email = uniqueEmail('resend');
  const { user, token: first } = await registerAndReadMail(email);
  const delivered = mail.nextMail(isVerificationMail);
  const done = nextVerificationJob(workers);
  const res = await post(
    '/api/auth/resend-verification',
    undefined,
    identityHeaders({ userId: user.id, email, auth: 'session' }),
  );
  t.equal(res.statusCode, 200);
  t.same(res.json(), { success: true, message: 'A verification link is on its way to your email address.' });
  t.equal(await done, 'sent');
  const second = verificationTokenIn((await delivered).raw)!;
  t.not(second, first);

  const old = await post('/api/auth/verify-email', { token: first });
  t.equal(old.statusCode, 410, 'the earlier link stopped working');
  t.equal((await session(user.id)).emailVerified, false);
  t.equal((await post('/api/auth/verify-email', { token: second })).statusCode, 200);
  t.equal((await session(user.id)).emailVerified, true);

  const verified = await post(
    '/api/auth/resend-verification',
    undefined,
    identityHeaders({ userId: user.id, email, auth: 'session' }),
  );
  t.equal(verified.statusCode, 409);
  t.same(verified.json(), { error: 'Email already verified' });
  const anonymous = await post('/api/auth/resend-verification');
  t.equal(anonymous.statusCode, 401, 'only for a signed-in user');
});

t.test('wallet accounts have no mailbox: resend refuses them', async (t) => {
  const { post } = await setup(t);
  const wallet = await createUserRow({ email: `0x${'ab'.repeat(20)}@wallet.agentyard` });
  const res = await post(
    '/api/auth/resend-verification',
    undefined,
    identityHeaders({ userId: wallet.id, email: wallet.email, auth: 'session' }),
  );
  t.equal(res.statusCode, 400);
  t.same(res.json(), { error: 'Wallet accounts have no email address to verify' });
  t.equal(
    (await systemDb().selectFrom('email_verifications').select('id').where('user_id', '=', wallet.id).execute()).length,
    0,
  );
});

t.test('a link sent to an address the account no longer has verifies nothing', async (t) => {
  const { post, registerAndReadMail, session } = await setup(t);
  const { user, token } = await registerAndReadMail(uniqueEmail('moved'));
  await systemDb()
    .updateTable('users')
    .set({ email: uniqueEmail('moved-to').toLowerCase() })
    .where('id', '=', user.id)
    .execute();
  t.equal(
    (await post('/api/auth/verify-email', { token })).statusCode,
    410,
    'it proves an address the account no longer has',
  );
  t.equal((await session(user.id)).emailVerified, false);
});

t.test('registration while the job queue is gone answers 503 and creates nobody', async (t) => {
  const relay = await startRelay(process.env.REDIS_URL!);
  const app = await build(t, { REDIS_URL: relay.url });
  await relay.goDown();
  const email = uniqueEmail('queue-down');
  const res = await app.inject({
    method: 'POST',
    url: '/api/register',
    headers: identityHeaders(),
    payload: { email, password: 'a good password' },
  });
  t.equal(res.statusCode, 503);
  t.same(res.json(), { error: 'Job queue unavailable, try again shortly' });
  t.equal(
    (await systemDb().selectFrom('users').select('id').where('email', '=', email.toLowerCase()).execute()).length,
    0,
  );
});
