import t from 'tap';
import { hashToken } from '@agentyard/crypto';
import { createUserRow, identityHeaders, systemDb, uniqueEmail } from '@agentyard/testing';
import { build } from './helper.ts';

const verify = (app: Awaited<ReturnType<typeof build>>, token: unknown) =>
  app.inject({ method: 'POST', url: '/api/invites/verify', headers: identityHeaders(), payload: { token } });

t.test('an invite is 64 hex characters, stored hashed, and verifies as solo until used or expired', async (t) => {
  const app = await build(t);
  const user = await createUserRow();
  const res = await app.inject({ method: 'POST', url: '/api/invite', headers: identityHeaders({ userId: user.id }), payload: { name: 'Ada Lovelace' } });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.match(body, { success: true, token: /^[0-9a-f]{64}$/ });
  t.equal(body.inviteUrl, `${process.env.PUBLIC_BASE_URL}/invite/${body.token}`);
  const row = await systemDb().selectFrom('invites').selectAll().where('token_hash', '=', hashToken(body.token)).executeTakeFirstOrThrow();
  t.equal(row.user_id, user.id);
  t.notOk(JSON.stringify(row).includes(body.token), 'the code is stored hashed and sealed, never in clear');

  const ok = await verify(app, body.token);
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { valid: true, plan: 'solo' }, 'no email field (removed), no note');

  await systemDb().updateTable('invites').set({ used_at: new Date() }).where('id', '=', row.id).execute();
  const used = await verify(app, body.token);
  t.equal(used.statusCode, 410);
  t.same(used.json(), { error: 'Invite already used' });

  await systemDb().updateTable('invites').set({ used_at: null, expires_at: new Date(Date.now() - 1000) }).where('id', '=', row.id).execute();
  const expired = await verify(app, body.token);
  t.equal(expired.statusCode, 404);
  t.same(expired.json(), { error: 'Invite not found or expired' });
});

t.test('verify: 400 for a bad format, 404 for an unknown invite', async (t) => {
  const app = await build(t);
  for (const token of ['abc', 'g'.repeat(64), 'A1B2C3D4E5F6', '0'.repeat(63)]) {
    const res = await verify(app, token);
    t.equal(res.statusCode, 400, token);
    t.same(res.json(), { error: 'Invalid invite token format' });
  }
  const missing = await verify(app, 'ab'.repeat(32));
  t.equal(missing.statusCode, 404);
});

t.test('create: 401 signed out, 400 names that look like injection, 404 for a user that no longer exists', async (t) => {
  const app = await build(t);
  const anonymous = await app.inject({ method: 'POST', url: '/api/invite', headers: identityHeaders(), payload: { name: 'x' } });
  t.equal(anonymous.statusCode, 401);
  const user = await createUserRow();
  for (const name of ['<script>alert(1)</script>', 'Robert\'); DROP TABLE users;--', ['$', '{7*7}'].join(''), '{{constructor}}', 'javascript:alert(1)', '   ', 'a\u0001b']) {
    const res = await app.inject({ method: 'POST', url: '/api/invite', headers: identityHeaders({ userId: user.id }), payload: { name } });
    t.equal(res.statusCode, 400, name);
    t.same(res.json(), { error: 'Invalid name' });
  }
  t.equal((await app.inject({ method: 'POST', url: '/api/invite', headers: identityHeaders({ userId: user.id }), payload: { name: 'Zoë O\'Brien-Smith' } })).statusCode, 200, 'ordinary names pass');
  const ghost = await app.inject({ method: 'POST', url: '/api/invite', headers: identityHeaders({ userId: '00000000-0000-4000-8000-000000000000' }), payload: { name: 'x' } });
  t.equal(ghost.statusCode, 404);
  t.same(ghost.json(), { error: 'User not found' });
  t.equal(Number((await systemDb().selectFrom('invites').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', user.id).executeTakeFirstOrThrow()).n), 1, 'only the good invite was stored');
});

t.test('admin invites: 403 ADMIN_REQUIRED for others; admins create for an email and list every invite with its status', async (t) => {
  const adminEmail = uniqueEmail('admin');
  const app = await build(t, { ADMIN_EMAILS: adminEmail });
  const admin = await createUserRow({ email: adminEmail });
  const someone = await createUserRow();
  const asAdmin = identityHeaders({ userId: admin.id, email: admin.email, admin: true });

  for (const method of ['GET', 'POST'] as const) {
    const res = await app.inject({ method, url: '/api/admin/invites', headers: identityHeaders({ userId: someone.id }), payload: method === 'POST' ? { email: 'x@y.z' } : undefined });
    t.equal(res.statusCode, 403);
    t.same(res.json(), { error: 'Admin access required', code: 'ADMIN_REQUIRED' });
  }
  const missing = await app.inject({ method: 'POST', url: '/api/admin/invites', headers: asAdmin, payload: {} });
  t.equal(missing.statusCode, 400);
  t.match(missing.json().error, /email/);
  t.equal((await app.inject({ method: 'POST', url: '/api/admin/invites', headers: asAdmin, payload: { email: 'nope' } })).statusCode, 400);

  const invitee = uniqueEmail('Invitee');
  const created = await app.inject({ method: 'POST', url: '/api/admin/invites', headers: asAdmin, payload: { email: invitee } });
  t.equal(created.statusCode, 200);
  const invite = created.json();
  t.match(invite, { success: true, code: /^[0-9a-f]{64}$/, email: invitee.toLowerCase() });
  t.equal(invite.inviteUrl, `${process.env.PUBLIC_BASE_URL}/invite/${invite.code}`);

  const byUser = (await app.inject({ method: 'POST', url: '/api/invite', headers: identityHeaders({ userId: someone.id }), payload: { name: 'Friend' } })).json();
  await systemDb().updateTable('invites').set({ used_at: new Date(), used_by: someone.id }).where('token_hash', '=', hashToken(byUser.token)).execute();

  const list = await app.inject({ method: 'GET', url: '/api/admin/invites', headers: asAdmin });
  t.equal(list.statusCode, 200);
  const body = list.json();
  const mine = body.invites.find((i: { code: string }) => i.code === invite.code);
  t.match(mine, { code: invite.code, email: invitee.toLowerCase(), status: 'active', createdAt: String });
  t.notOk('usedAt' in mine);
  const usedOne = body.invites.find((i: { code: string }) => i.code === byUser.token);
  t.match(usedOne, { status: 'used', usedAt: String, userId: someone.id, email: null });
  t.equal(body.total, body.invites.length);
  t.equal(body.active, body.invites.filter((i: { status: string }) => i.status === 'active').length);
});

t.test('the deprecated 12-character invite routes answer 410 and point to their replacements', async (t) => {
  const app = await build(t);
  for (const [url, replacement] of [['/api/invite/generate', 'POST /api/invite'], ['/api/invite/validate', 'POST /api/invites/verify']]) {
    const res = await app.inject({ method: 'POST', url, headers: identityHeaders(), payload: { code: 'ABCDEF123456' } });
    t.equal(res.statusCode, 410);
    t.same(res.json(), { error: `This route is deprecated (12-character codes); use ${replacement}`, code: 'DEPRECATED' });
  }
});
