import t from 'tap';
import { hashToken } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import { createUserRow, identityHeaders, systemDb, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';

type App = Awaited<ReturnType<typeof build>>;

async function newInvite(app: App): Promise<string> {
  const creator = await createUserRow();
  const res = await app.inject({
    method: 'POST',
    url: '/api/invite',
    headers: identityHeaders({ userId: creator.id }),
    payload: { name: 'A Friend' },
  });
  return res.json().token as string;
}

const register = (app: App, payload: Record<string, unknown>) =>
  app.inject({
    method: 'POST',
    url: '/api/register',
    headers: identityHeaders(),
    payload: { password: 'a good password', ...payload },
  });

const usersWith = async (email: string) =>
  (
    await systemDb()
      .selectFrom('users')
      .select('id')
      .where(sql<boolean>`lower(email) = ${email.toLowerCase()}`)
      .execute()
  ).length;
const inviteRow = (token: string) =>
  systemDb()
    .selectFrom('invites')
    .select(['used_at', 'used_by'])
    .where('token_hash', '=', hashToken(token))
    .executeTakeFirstOrThrow();

t.test('registering with an invite uses it up: used_at and the new user recorded, verify then says 410', async (t) => {
  const app = await build(t);
  const token = await newInvite(app);
  const email = uniqueEmail('invited');
  const res = await register(app, { email, inviteToken: token.toUpperCase() });
  t.equal(res.statusCode, 201);
  const row = await inviteRow(token);
  t.ok(row.used_at, 'used_at set');
  t.equal(row.used_by, res.json().id, 'the registered user is recorded');
  const verify = await app.inject({
    method: 'POST',
    url: '/api/invites/verify',
    headers: identityHeaders(),
    payload: { token },
  });
  t.equal(verify.statusCode, 410);

  const again = await register(app, { email: uniqueEmail('second'), inviteToken: token });
  t.equal(again.statusCode, 410);
  t.same(again.json(), { error: 'Invite already used' });
});

t.test(
  'concurrent registrations with one invite: exactly one succeeds, the others get 410 and create nobody',
  async (t) => {
    const app = await build(t);
    const token = await newInvite(app);
    const emails = Array.from({ length: 6 }, (_, i) => uniqueEmail(`race${i}`));
    const answers = await Promise.all(emails.map((email) => register(app, { email, inviteToken: token })));
    const statuses = answers.map((a) => a.statusCode).sort();
    t.same(statuses, [201, 410, 410, 410, 410, 410]);
    const winner = answers.find((a) => a.statusCode === 201)!.json();
    t.equal((await inviteRow(token)).used_by, winner.id);
    const created = await Promise.all(emails.map(usersWith));
    t.equal(
      created.reduce((a, b) => a + b, 0),
      1,
      'only the winner exists',
    );
  },
);

t.test('missing or expired invite: 404; bad format: 400; nothing is created', async (t) => {
  const app = await build(t);
  const unknown = uniqueEmail('unknown');
  const missing = await register(app, { email: unknown, inviteToken: 'ab'.repeat(32) });
  t.equal(missing.statusCode, 404);
  t.same(missing.json(), { error: 'Invite not found or expired' });

  const token = await newInvite(app);
  await systemDb()
    .updateTable('invites')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('token_hash', '=', hashToken(token))
    .execute();
  const expired = await register(app, { email: unknown, inviteToken: token });
  t.equal(expired.statusCode, 404);
  t.notOk((await inviteRow(token)).used_at, 'an expired invite is not marked used');

  for (const inviteToken of ['abc', 'g'.repeat(64), '']) {
    const bad = await register(app, { email: unknown, inviteToken });
    t.equal(bad.statusCode, 400, JSON.stringify(inviteToken));
    t.same(bad.json(), { error: 'Invalid invite token format' });
  }
  t.equal(await usersWith(unknown), 0);
});

t.test('a registration that fails (email taken) leaves the invite unused', async (t) => {
  const app = await build(t);
  const taken = await createUserRow();
  const token = await newInvite(app);
  const res = await register(app, { email: taken.email, inviteToken: token });
  t.equal(res.statusCode, 409);
  const row = await inviteRow(token);
  t.same([row.used_at, row.used_by], [null, null]);
});

t.test('INVITE_REQUIRED: no invite is 403 with a clear message; with one, registration works', async (t) => {
  const app = await build(t, { INVITE_REQUIRED: 'true' });
  const email = uniqueEmail('gated');
  const refused = await register(app, { email });
  t.equal(refused.statusCode, 403);
  t.same(refused.json(), { error: 'An invite is required to register: pass inviteToken', code: 'INVITE_REQUIRED' });
  t.equal(await usersWith(email), 0);
  const token = await newInvite(app);
  t.equal((await register(app, { email, inviteToken: token })).statusCode, 201);

  const open = await build(t);
  t.equal((await register(open, { email: uniqueEmail('open') })).statusCode, 201, 'by default no invite is needed');
});
