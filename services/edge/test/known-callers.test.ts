import { once } from 'node:events';
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { hashToken, randomToken } from '@agentyard/crypto';
import { sql } from '@agentyard/db';
import { metrics } from '@agentyard/observability';
import { appDb, createUserRow, systemDb } from '@agentyard/testing';
import { answeringFromMemory, buildWholeEdge, startEchoService } from './helper.ts';

// The edge answers a caller it resolved from memory only while both of its feeds of changes are
// live (the database's notices and the auth service's Redis announcements); these tests cut one
// feed and check that a change made meanwhile counts on the next request, from the database.
async function sessionFor(userId: string) {
  const token = randomToken();
  const row = await systemDb()
    .insertInto('sessions')
    .values({ user_id: userId, token_hash: hashToken(token), expires_at: new Date(Date.now() + 3600_000) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { token, sessionId: row.id };
}

/** This process's count of session lookups made in the database. */
async function databaseLookups(): Promise<number> {
  const { values } = await metrics.edgeIdentityLookups().get();
  return values.find((v) => v.labels.kind === 'session')?.value ?? 0;
}

async function edgeWithSession(t: Test) {
  const upstream = await startEchoService(t);
  const edge = await buildWholeEdge(t, upstream);
  await answeringFromMemory(edge.known);
  const user = await createUserRow();
  const session = await sessionFor(user.id);
  const who = async (token: string) =>
    (await edge.web.inject({ method: 'GET', url: '/echo', headers: { cookie: `agentyard-session=${token}` } })).json()
      .identity;
  t.equal((await who(session.token)).userId, user.id);
  const before = await databaseLookups();
  t.equal((await who(session.token)).userId, user.id);
  t.equal(await databaseLookups(), before, 'the second request was answered from memory');
  return { edge, user, session, who };
}

t.test('while the database notices are lost nothing is answered from memory', async (t) => {
  const { edge, user, session, who } = await edgeWithSession(t);
  const lost = once(edge.known.events, 'lost');
  const back = once(edge.known.events, 'listening');
  // The listener connects as the runtime role (LISTEN needs no privilege), so that role may end it.
  const { rows } = await sql<{
    ok: boolean;
  }>`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ${edge.known.applicationName}`.execute(
    appDb(),
  );
  t.same(
    rows.map((r) => r.ok),
    [true],
  );
  await lost;
  t.equal(edge.known.cached, false);
  // Deleted while no notice can arrive: the next request still sees it (whether or not the listener is back yet).
  await systemDb().deleteFrom('sessions').where('id', '=', session.sessionId).execute();
  const before = await databaseLookups();
  t.has(await who(session.token), { auth: 'none', userId: null });
  t.equal(await databaseLookups(), before + 1, 'looked up in the database');
  await back;
  t.equal(edge.known.cached, true, 'answered from memory again once the notices are back');
  const other = await sessionFor(user.id);
  t.equal((await who(other.token)).userId, user.id);
});

t.test('while the Redis announcements are lost nothing is answered from memory', async (t) => {
  const { edge, session, who } = await edgeWithSession(t);
  const redis = new Redis(process.env.REDIS_URL!);
  t.teardown(() => redis.disconnect());
  const lost = once(edge.known.events, 'lost');
  const back = once(edge.known.events, 'listening');
  const clients = (await redis.client('LIST')) as string;
  const id = clients
    .split('\n')
    .find((line) => line.includes(` name=${edge.known.applicationName} `))
    ?.match(/^id=(\d+)/)?.[1];
  t.ok(id, 'the edge subscribes under its name');
  await redis.client('KILL', 'ID', id!);
  await lost;
  t.equal(edge.known.cached, false);
  // A session ended without the announcement (only the database's notice tells of it) is refused too.
  await systemDb().deleteFrom('sessions').where('id', '=', session.sessionId).execute();
  t.has(await who(session.token), { auth: 'none', userId: null });
  await back;
  t.equal(edge.known.cached, true, 'answered from memory again once the announcements are back');
});
