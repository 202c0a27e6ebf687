import t from 'tap';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { answeringFromMemory, buildEdge, buildWholeEdge, changedInDatabase, startEchoService } from './helper.ts';

async function keyFor(userId: string) {
  const key = `sk_${randomToken()}`;
  const row = await systemDb()
    .insertInto('api_keys')
    .values({ user_id: userId, name: 'test', key_hash: hashToken(key), prefix: key.slice(0, 9) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { key, id: row.id };
}

t.test("a user API key is a bearer token on the web surface with its owner's identity", async (t) => {
  const upstream = await startEchoService(t);
  const { web: edge, known } = await buildWholeEdge(t, upstream, { ADMIN_EMAILS: 'nobody@example.test' });
  await answeringFromMemory(known);
  const user = await createUserRow();
  const { key, id } = await keyFor(user.id);
  const who = async (authorization: string) =>
    (await edge.inject({ method: 'GET', url: '/echo', headers: { authorization } })).json();
  const seen = await who(`Bearer ${key}`);
  t.has(seen.identity, {
    surface: 'web',
    auth: 'user-key',
    userId: user.id,
    email: user.email,
    admin: false,
    sessionId: null,
    keyId: id,
  });
  const other = await keyFor(user.id);
  t.equal(
    (await who(`Bearer ${other.key}`)).identity.keyId,
    other.id,
    'each key signs its own id, so its own limits follow it',
  );
  t.notOk(seen.headers.authorization, 'the key itself never reaches services');

  t.has((await who('Bearer sk_not-a-real-key')).identity, { auth: 'none', userId: null });
  t.has((await who(`Basic ${key}`)).identity, { auth: 'none', userId: null });
  await changedInDatabase(
    known,
    () => systemDb().deleteFrom('api_keys').where('id', '=', id).execute(),
    `token:${hashToken(key)}`,
  );
  t.has(
    (await who(`Bearer ${key}`)).identity,
    { auth: 'none', userId: null },
    'a deleted key stops working once its notice is in',
  );
});

t.test('a session cookie takes precedence over a key', async (t) => {
  const upstream = await startEchoService(t);
  const edge = await buildEdge(t, 'web', upstream);
  const [keyOwner, sessionOwner] = await Promise.all([createUserRow(), createUserRow()]);
  const { key } = await keyFor(keyOwner.id);
  const token = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: sessionOwner.id, token_hash: hashToken(token), expires_at: new Date(Date.now() + 60_000) })
    .execute();
  const res = await edge.inject({
    method: 'GET',
    url: '/echo',
    headers: { authorization: `Bearer ${key}`, cookie: `agentyard-session=${token}` },
  });
  t.has(res.json().identity, { auth: 'session', userId: sessionOwner.id, keyId: null });
});
