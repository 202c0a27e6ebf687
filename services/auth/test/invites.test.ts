import t from 'tap';
import { hashToken } from '@agentyard/crypto';
import {
  againstAnOpenTransaction,
  createUserRow,
  identityHeaders,
  malformedCursors,
  systemDb,
  uniqueEmail,
  walkPages,
  warmAppPool,
} from '@agentyard/testing';
import { parseKeyring } from '@agentyard/crypto';
import { createInvite } from '../src/domain/invites.ts';
import { build } from './helper.ts';

const verify = (app: Awaited<ReturnType<typeof build>>, token: unknown) =>
  app.inject({ method: 'POST', url: '/api/invites/verify', headers: identityHeaders(), payload: { token } });

t.test('an invite is 64 hex characters, stored hashed, and verifies as solo until used or expired', async (t) => {
  const app = await build(t);
  const user = await createUserRow();
  const res = await app.inject({
    method: 'POST',
    url: '/api/invite',
    headers: identityHeaders({ userId: user.id }),
    payload: { name: 'Ada Lovelace' },
  });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.match(body, { success: true, token: /^[0-9a-f]{64}$/ });
  t.equal(body.inviteUrl, `${process.env.PUBLIC_BASE_URL}/invite/${body.token}`);
  const row = await systemDb()
    .selectFrom('invites')
    .selectAll()
    .where('token_hash', '=', hashToken(body.token))
    .executeTakeFirstOrThrow();
  t.equal(row.user_id, user.id);
  t.notOk(JSON.stringify(row).includes(body.token), 'the code is stored hashed and sealed, never in clear');

  const ok = await verify(app, body.token);
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { valid: true, plan: 'solo' }, 'no email field (removed), no note');

  await systemDb().updateTable('invites').set({ used_at: new Date() }).where('id', '=', row.id).execute();
  const used = await verify(app, body.token);
  t.equal(used.statusCode, 410);
  t.same(used.json(), { error: 'Invite already used' });

  await systemDb()
    .updateTable('invites')
    .set({ used_at: null, expires_at: new Date(Date.now() - 1000) })
    .where('id', '=', row.id)
    .execute();
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

t.test(
  'create: 401 signed out, 400 names that look like injection, 404 for a user that no longer exists',
  async (t) => {
    const app = await build(t);
    const anonymous = await app.inject({
      method: 'POST',
      url: '/api/invite',
      headers: identityHeaders(),
      payload: { name: 'x' },
    });
    t.equal(anonymous.statusCode, 401);
    const user = await createUserRow();
    for (const name of [
      '<script>alert(1)</script>',
      "Robert'); DROP TABLE users;--",
      ['$', '{7*7}'].join(''),
      '{{constructor}}',
      'javascript:alert(1)',
      '   ',
      'a\u0001b',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/invite',
        headers: identityHeaders({ userId: user.id }),
        payload: { name },
      });
      t.equal(res.statusCode, 400, name);
      t.same(res.json(), { error: 'Invalid name' });
    }
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/invite',
          headers: identityHeaders({ userId: user.id }),
          payload: { name: "Zoë O'Brien-Smith" },
        })
      ).statusCode,
      200,
      'ordinary names pass',
    );
    const ghost = await app.inject({
      method: 'POST',
      url: '/api/invite',
      headers: identityHeaders({ userId: '00000000-0000-4000-8000-000000000000' }),
      payload: { name: 'x' },
    });
    t.equal(ghost.statusCode, 404);
    t.same(ghost.json(), { error: 'User not found' });
    t.equal(
      Number(
        (
          await systemDb()
            .selectFrom('invites')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', '=', user.id)
            .executeTakeFirstOrThrow()
        ).n,
      ),
      1,
      'only the good invite was stored',
    );
  },
);

t.test(
  'admin invites: 403 ADMIN_REQUIRED for others; admins create for an email and list every invite with its status',
  async (t) => {
    const adminEmail = uniqueEmail('admin');
    const app = await build(t, { ADMIN_EMAILS: adminEmail });
    const admin = await createUserRow({ email: adminEmail });
    const someone = await createUserRow();
    const asAdmin = identityHeaders({ userId: admin.id, email: admin.email, admin: true });

    for (const method of ['GET', 'POST'] as const) {
      const res = await app.inject({
        method,
        url: '/api/admin/invites',
        headers: identityHeaders({ userId: someone.id }),
        payload: method === 'POST' ? { email: 'x@y.z' } : undefined,
      });
      t.equal(res.statusCode, 403);
      t.same(res.json(), { error: 'Admin access required', code: 'ADMIN_REQUIRED' });
    }
    const missing = await app.inject({ method: 'POST', url: '/api/admin/invites', headers: asAdmin, payload: {} });
    t.equal(missing.statusCode, 400);
    t.match(missing.json().error, /email/);
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/admin/invites', headers: asAdmin, payload: { email: 'nope' } }))
        .statusCode,
      400,
    );

    const invitee = uniqueEmail('Invitee');
    const created = await app.inject({
      method: 'POST',
      url: '/api/admin/invites',
      headers: asAdmin,
      payload: { email: invitee },
    });
    t.equal(created.statusCode, 200);
    const invite = created.json();
    t.match(invite, { success: true, code: /^[0-9a-f]{64}$/, email: invitee.toLowerCase() });
    t.equal(invite.inviteUrl, `${process.env.PUBLIC_BASE_URL}/invite/${invite.code}`);

    const byUser = (
      await app.inject({
        method: 'POST',
        url: '/api/invite',
        headers: identityHeaders({ userId: someone.id }),
        payload: { name: 'Friend' },
      })
    ).json();
    await systemDb()
      .updateTable('invites')
      .set({ used_at: new Date(), used_by: someone.id })
      .where('token_hash', '=', hashToken(byUser.token))
      .execute();

    const list = await app.inject({ method: 'GET', url: '/api/admin/invites?limit=100', headers: asAdmin });
    t.equal(list.statusCode, 200);
    const body = list.json();
    t.equal(body.nextCursor, null);
    const mine = body.invites.find((i: { code: string }) => i.code === invite.code);
    t.match(mine, { code: invite.code, email: invitee.toLowerCase(), status: /^active$/, createdAt: String });
    t.notOk('usedAt' in mine);
    const usedOne = body.invites.find((i: { code: string }) => i.code === byUser.token);
    t.match(usedOne, { status: /^used$/, usedAt: String, userId: someone.id, email: null });
    t.equal(body.total, body.invites.length);
    t.equal(body.active, body.invites.filter((i: { status: string }) => i.status === 'active').length);
  },
);

t.test('the deprecated 12-character invite routes answer 410 and point to their replacements', async (t) => {
  const app = await build(t);
  for (const [url, replacement] of [
    ['/api/invite/generate', 'POST /api/invite'],
    ['/api/invite/validate', 'POST /api/invites/verify'],
  ]) {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: identityHeaders(),
      payload: { code: 'ABCDEF123456' },
    });
    t.equal(res.statusCode, 410);
    t.same(res.json(), {
      error: `This route is deprecated (12-character codes); use ${replacement}`,
      code: 'DEPRECATED',
    });
  }
});

t.test(
  'at the cap of unused invites a new one is 429 and nothing is created; used and expired ones do not count',
  async (t) => {
    const app = await build(t, { INVITES_PER_USER_MAX: '2' });
    const user = await createUserRow();
    const as = identityHeaders({ userId: user.id });
    const invite = () => app.inject({ method: 'POST', url: '/api/invite', headers: as, payload: { name: 'Friend' } });
    const count = async () =>
      (await systemDb().selectFrom('invites').select('id').where('user_id', '=', user.id).execute()).length;
    const first = (await invite()).json();
    t.equal((await invite()).statusCode, 200);
    const res = await invite();
    t.equal(res.statusCode, 429);
    t.same(res.json(), {
      error: 'Invite limit reached: at most 2 unused invites at a time; wait until one is used or expires',
      code: 'INVITE_LIMIT',
      limit: 2,
    });
    t.equal(await count(), 2);
    await systemDb()
      .updateTable('invites')
      .set({ used_at: new Date() })
      .where('token_hash', '=', hashToken(first.token))
      .execute();
    t.equal((await invite()).statusCode, 200, 'a used invite makes room');
    await systemDb()
      .updateTable('invites')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', user.id)
      .where('used_at', 'is', null)
      .execute();
    t.equal((await invite()).statusCode, 200, 'expired ones make room');

    await warmAppPool();
    const racer = await createUserRow();
    const asRacer = identityHeaders({ userId: racer.id });
    await app.inject({ method: 'POST', url: '/api/invite', headers: asRacer, payload: { name: 'Friend' } });
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        app.inject({ method: 'POST', url: '/api/invite', headers: asRacer, payload: { name: 'Friend' } }),
      ),
    );
    t.same(
      results.map((r) => r.statusCode).sort(),
      [200, 429, 429, 429, 429, 429],
      'concurrent creations at cap - 1: exactly one',
    );
    t.equal((await systemDb().selectFrom('invites').select('id').where('user_id', '=', racer.id).execute()).length, 2);
  },
);

t.test('admins have their own cap, which holds against a creation still uncommitted', async (t) => {
  const adminEmail = uniqueEmail('admin');
  const app = await build(t, { ADMIN_EMAILS: adminEmail, INVITES_PER_ADMIN_MAX: '2', INVITES_PER_USER_MAX: '1' });
  const admin = await createUserRow({ email: adminEmail });
  const asAdmin = identityHeaders({ userId: admin.id, email: admin.email, admin: true });
  const create = () =>
    app.inject({
      method: 'POST',
      url: '/api/admin/invites',
      headers: asAdmin,
      payload: { email: uniqueEmail('invitee') },
    });
  t.equal((await create()).statusCode, 200, 'the user cap (1) does not bind an admin');
  const keyring = parseKeyring(process.env.ENCRYPTION_KEYS!);
  const [first, second] = await againstAnOpenTransaction(
    admin.id,
    (trx) => createInvite(trx, keyring, admin.id, 2, { email: uniqueEmail('first') }),
    create,
  );
  t.equal(first.status, 'fulfilled');
  t.has(second.status === 'fulfilled' && [second.value.statusCode, second.value.json()], [
    429,
    { code: 'INVITE_LIMIT', limit: 2 },
  ]);
  t.equal((await systemDb().selectFrom('invites').select('id').where('user_id', '=', admin.id).execute()).length, 2);
});

t.test(
  'the admin list pages every invite newest first while invites are added between pages; total and active count them all',
  async (t) => {
    const adminEmail = uniqueEmail('admin');
    const app = await build(t, { ADMIN_EMAILS: adminEmail });
    const admin = await createUserRow({ email: adminEmail });
    const asAdmin = identityHeaders({ userId: admin.id, email: admin.email, admin: true });
    const create = async () =>
      (
        await app.inject({
          method: 'POST',
          url: '/api/admin/invites',
          headers: asAdmin,
          payload: { email: uniqueEmail('invitee') },
        })
      ).json().code as string;
    for (let i = 0; i < 5; i++) await create();
    const before = (await app.inject({ method: 'GET', url: '/api/admin/invites?limit=100', headers: asAdmin })).json();
    const added: string[] = [];
    const pages = await walkPages(
      async (cursor) => {
        const body = (
          await app.inject({
            method: 'GET',
            url: `/api/admin/invites?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
            headers: asAdmin,
          })
        ).json();
        return { items: body.invites.map((i: { code: string }) => i.code), nextCursor: body.nextCursor };
      },
      async () => {
        added.push(await create());
      },
    );
    const walked = pages.flat();
    t.same(
      walked,
      before.invites.map((i: { code: string }) => i.code),
      'every invite there was at the first page, in order, each once',
    );
    t.equal(new Set(walked).size, walked.length);
    const after = (await app.inject({ method: 'GET', url: '/api/admin/invites?limit=1', headers: asAdmin })).json();
    t.equal(after.invites.length, 1);
    t.equal(after.total, before.total + added.length, 'total counts every invite, not the page');
    t.equal(after.active, before.active + added.length);
    for (const cursor of malformedCursors()) {
      t.equal(
        (
          await app.inject({
            method: 'GET',
            url: `/api/admin/invites?cursor=${encodeURIComponent(cursor)}`,
            headers: asAdmin,
          })
        ).statusCode,
        400,
        cursor,
      );
    }
  },
);
