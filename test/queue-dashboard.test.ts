import t from 'tap';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, startPlatform, systemDb, uniqueEmail } from '@agentyard/testing';

// The auth service without its worker: the mail jobs registration queues stay in the queue to be seen.
const adminEmail = uniqueEmail('queue-admin');
const platform = await startPlatform(['auth'], { ADMIN_EMAILS: adminEmail, RATE_LIMITS: 'web-register=1000' });
t.teardown(() => platform.stop());

async function sessionOf(email: string, verified: boolean): Promise<string> {
  const user = await createUserRow({ email });
  if (verified)
    await systemDb().updateTable('users').set({ email_verified_at: new Date() }).where('id', '=', user.id).execute();
  const token = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: user.id, token_hash: hashToken(token), expires_at: new Date(Date.now() + 3600_000) })
    .execute();
  return `agentyard-session=${token}`;
}
const dashboard = (path: string, cookie?: string, init: RequestInit = {}) =>
  fetch(`${platform.webUrl}/admin/queues${path}`, {
    ...init,
    headers: { ...(cookie ? { cookie } : {}), origin: new URL(platform.env.PUBLIC_BASE_URL!).origin },
  });

t.test('admins only: anyone else gets the 404 of a path that does not exist', async (t) => {
  const user = await sessionOf(uniqueEmail('queue-user'), true);
  for (const cookie of [undefined, user]) {
    const page = await dashboard('', cookie);
    t.equal(page.status, 404);
    t.same(await page.json(), { error: 'Not found' });
    t.equal((await dashboard('/api/queues', cookie)).status, 404);
  }
  t.equal(
    (await dashboard('', await sessionOf(uniqueEmail('queue-unverified'), false))).status,
    404,
    'an admin address not yet verified is no admin',
  );
});

t.test('an admin sees every queue and the jobs, whose data hold no secret', async (t) => {
  const password = `pw-${randomToken()}`;
  const email = uniqueEmail('queue-mail');
  t.equal(
    (
      await fetch(`${platform.webUrl}/api/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password, name: 'Q' }),
      })
    ).status,
    201,
  );
  const admin = await sessionOf(adminEmail, true);
  const page = await dashboard('', admin);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /text\/html/);
  const listed = await dashboard('/api/queues?activeQueue=outbound-email&status=waiting&page=1', admin);
  t.equal(listed.status, 200);
  const body = await listed.text();
  const { queues } = JSON.parse(body) as {
    queues: Array<{ name: string; jobs: Array<{ name: string; data: unknown }> }>;
  };
  t.ok(
    ['provisioning', 'agent-lifecycle', 'outbound-email'].every((name) => queues.some((q) => q.name === name)),
    'every queue is listed',
  );
  const mail = queues.find((q) => q.name === 'outbound-email')!;
  const job = mail.jobs.find((j) => j.name === 'email-verification');
  t.ok(job, 'the verification mail job is shown');
  t.same(
    Object.keys(job!.data as object).sort(),
    ['kind', 'queuedBy', 'verificationId'],
    'a reference to the row (and the request that queued it), not the token',
  );
  // Nothing a caller holds as a secret appears anywhere in what the dashboard answers.
  const tokens = (await systemDb().selectFrom('email_verifications').select('token_hash').execute()).map(
    (row) => row.token_hash ?? '',
  );
  for (const secret of [
    password,
    admin.split('=')[1]!,
    platform.env.INTERNAL_API_KEY!,
    platform.env.IDENTITY_SECRET!,
    ...tokens,
  ].filter(Boolean)) {
    t.notOk(body.includes(secret), 'no secret in the job list');
  }
});
