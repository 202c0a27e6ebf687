import t from 'tap';
import { sql } from 'kysely';
import { createAppDb, withUser, withUserStatement } from '@agentyard/db';
import { createUserRow } from '@agentyard/testing';

// One pooled connection, so every transaction below reuses the connection of the one before.
const db = createAppDb(process.env.DATABASE_URL!, { max: 1, allowExitOnIdle: true });
t.teardown(() => db.destroy());

const currentUser = sql<{ user_id: string }>`select current_setting('app.user_id', true) as user_id`;
const ownName = async (userId: string | null, run: typeof withUser) =>
  run(db, userId, async (trx) => (await trx.selectFrom('users').select('name').executeTakeFirst())?.name ?? null);

t.test('the user context holds inside the transaction only', async (t) => {
  const user = await createUserRow({ name: 'context' });
  for (const run of [withUser, withUserStatement]) {
    t.equal((await run(db, user.id, (trx) => currentUser.execute(trx))).rows[0]!.user_id, user.id, `${run.name}: set`);
    t.equal(await ownName(user.id, run), 'context', `${run.name}: reads the user's row`);
    t.equal(await ownName(null, run), null, `${run.name}: no user reads nothing`);
    t.equal((await currentUser.execute(db)).rows[0]!.user_id ?? '', '', `${run.name}: gone after the transaction`);
  }
});

t.test('a failing statement fails the transaction and the connection stays usable', async (t) => {
  const user = await createUserRow({ name: 'after failure' });
  for (const run of [withUser, withUserStatement]) {
    await t.rejects(
      run(db, user.id, (trx) => sql`select 1 / 0`.execute(trx)),
      { code: /^22012$/ },
      run.name,
    );
    t.equal(await ownName(user.id, run), 'after failure', `${run.name}: next transaction on the connection works`);
  }
});

t.test('a malformed user id fails the statement and changes nothing', async (t) => {
  const user = await createUserRow({ name: 'untouched' });
  for (const run of [withUser, withUserStatement]) {
    await t.rejects(
      run(db, 'not-a-uuid', (trx) =>
        trx.updateTable('users').set({ name: 'changed' }).where('id', '=', user.id).execute(),
      ),
      { code: /^22P02$/ },
      run.name,
    );
  }
  t.equal(await ownName(user.id, withUser), 'untouched');
});

t.test('withUser: work that writes then fails rolls back', async (t) => {
  const user = await createUserRow({ name: 'before' });
  await t.rejects(
    withUser(db, user.id, async (trx) => {
      await trx.updateTable('users').set({ name: 'after' }).where('id', '=', user.id).execute();
      await sql`select 1 / 0`.execute(trx);
    }),
    { code: /^22012$/ },
  );
  t.equal(await ownName(user.id, withUser), 'before');
});

t.test('withUserStatement refuses a second statement', async (t) => {
  const user = await createUserRow();
  await t.rejects(
    withUserStatement(db, user.id, async (trx) => {
      await currentUser.execute(trx);
      await currentUser.execute(trx);
    }),
    /second statement/,
  );
});
