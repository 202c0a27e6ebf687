import t from 'tap';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { answeringFromMemory, buildEdge, buildWholeEdge, changedInDatabase, startEchoService } from './helper.ts';

async function sessionFor(userId: string, expiresInMs = 3600_000) {
  const token = randomToken();
  const row = await systemDb()
    .insertInto('sessions')
    .values({ user_id: userId, token_hash: hashToken(token), expires_at: new Date(Date.now() + expiresInMs) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { token, sessionId: row.id };
}

t.test('the session cookie becomes a signed identity; the cookie itself never reaches services', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream);
  const user = await createUserRow();
  const { token, sessionId } = await sessionFor(user.id);
  const res = await edge.inject({
    method: 'GET',
    url: '/echo',
    headers: { cookie: `theme=dark; agentyard-session=${token}`, 'x-user-id': 'spoofed', 'x-user-email': 'spoof@x.y' },
  });
  t.equal(res.statusCode, 200);
  const seen = res.json();
  t.has(seen.identity, {
    surface: 'web',
    auth: 'session',
    userId: user.id,
    email: user.email,
    sessionId,
    admin: false,
  });
  t.notOk(seen.headers.cookie, 'no cookie forwarded');
  t.notOk(seen.headers['x-user-id'], 'web callers cannot claim a user context');
  t.match(res.headers['x-request-id'], /.{8,}/);
});

t.test('a session deleted in the database stops working once its notice is in; an expired one at once', async (t) => {
  const upstream = await startEchoService(t);
  const { web: edge, known } = await buildWholeEdge(t, upstream);
  await answeringFromMemory(known);
  const user = await createUserRow();
  const { token, sessionId } = await sessionFor(user.id);
  const who = async (cookieToken: string) =>
    (await edge.inject({ method: 'GET', url: '/echo', headers: { cookie: `agentyard-session=${cookieToken}` } })).json()
      .identity;
  t.equal((await who(token)).userId, user.id);
  t.equal((await who(token)).userId, user.id, 'from memory');
  await changedInDatabase(
    known,
    () => systemDb().deleteFrom('sessions').where('id', '=', sessionId).execute(),
    `token:${hashToken(token)}`,
  );
  t.has(await who(token), { auth: 'none', userId: null });
  const expired = await sessionFor(user.id, -1000);
  t.has(await who(expired.token), { auth: 'none', userId: null });
  t.has(await who('not-a-token'), { auth: 'none', userId: null });
});

t.test(
  'a listed admin address is admin only once verified, except under NODE_ENV=development; on user keys too',
  async (t) => {
    const upstream = await startEchoService(t);
    const email = `edge-admin-${randomToken(6).toLowerCase()}@example.test`;
    const { web: edge, known } = await buildWholeEdge(t, upstream, { ADMIN_EMAILS: email });
    await answeringFromMemory(known);
    const devEdge = await buildEdge(t, 'web', upstream, { ADMIN_EMAILS: email, NODE_ENV: 'development' });
    const user = await createUserRow({ email });
    const { token } = await sessionFor(user.id);
    const key = `sk_${randomToken()}`;
    await systemDb()
      .insertInto('api_keys')
      .values({ user_id: user.id, name: 'k', key_hash: hashToken(key), prefix: key.slice(0, 9) })
      .execute();
    const admin = async (instance: typeof edge, headers: Record<string, string>) =>
      (await instance.inject({ method: 'GET', url: '/echo', headers })).json().identity.admin;
    const bySession = { cookie: `agentyard-session=${token}` };
    const byKey = { authorization: `Bearer ${key}` };
    t.equal(await admin(edge, bySession), false, 'someone registered the address: no admin');
    t.equal(await admin(edge, byKey), false, 'nor through a key');
    t.equal(await admin(devEdge, bySession), true, 'development: admin before the mail round trip');
    await changedInDatabase(
      known,
      () => systemDb().updateTable('users').set({ email_verified_at: new Date() }).where('id', '=', user.id).execute(),
      `user:${user.id}`,
    );
    t.equal(await admin(edge, bySession), true, 'verified: admin on the next request after its notice');
    t.equal(await admin(edge, byKey), true);
  },
);
