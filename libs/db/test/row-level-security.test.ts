import t from 'tap';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { withUser, withUserStatement } from '@agentyard/db';
import { roleFlags } from '@agentyard/db/admin';
import { privateDatabase, seedRowFor, tablesWithoutOwner } from '@agentyard/testing';

t.test('the runtime role is neither superuser nor BYPASSRLS and owns no table', async (t) => {
  const flags = await roleFlags(process.env.DATABASE_URL!);
  t.same(flags, { rolname: 'agentyard_app', rolsuper: false, rolbypassrls: false });
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_tables where schemaname = 'public' and tableowner = current_user`.execute(
    (await privateDatabase(t)).app,
  );
  t.equal(rows[0]!.n, 0);
});

t.test("every user-owned table: RLS forced, and user A can neither see nor change user B's rows", async (t) => {
  const db = await privateDatabase(t);
  const tables = (
    await sql<{ name: string; rls: boolean; forced: boolean; has_user_id: boolean }>`
    select c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as forced,
      exists (select 1 from information_schema.columns col where col.table_schema = 'public' and col.table_name = c.relname and col.column_name = 'user_id') as has_user_id
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'r' order by 1`.execute(db.system)
  ).rows;
  const owned = tables.filter((table) => !(table.name in tablesWithoutOwner));
  t.ok(owned.some((table) => table.name === 'users'));

  const [a, b] = await Promise.all(
    ['a', 'b'].map((tag) =>
      db.system
        .insertInto('users')
        .values({ email: `${tag}-${randomUUID()}@example.test`, name: tag })
        .returning('id')
        .executeTakeFirstOrThrow(),
    ),
  );
  const userA = a!.id;
  const userB = b!.id;

  for (const table of owned) {
    t.test(table.name, async (t) => {
      t.ok(table.rls && table.forced, 'ENABLE and FORCE ROW LEVEL SECURITY');
      const key = table.name === 'users' ? 'id' : 'user_id';
      t.ok(
        table.name === 'users' || table.has_user_id,
        'is keyed by user_id (or listed in tablesWithoutOwner with a reason)',
      );
      if (table.name !== 'users') {
        const seed = seedRowFor[table.name];
        if (!seed) return t.fail(`no seed for ${table.name} in libs/testing/src/seeds.ts`);
        await seed(db.system, userA);
        await seed(db.system, userB);
      }
      const T = sql.table(table.name);
      const K = sql.ref(key);
      const count = async (userId: string | null, where = sql`true`) =>
        withUser(
          db.app,
          userId,
          async (trx) =>
            (await sql<{ n: number }>`select count(*)::int as n from ${T} where ${where}`.execute(trx)).rows[0]!.n,
        );

      t.equal(await count(userA, sql`${K} = ${userB}`), 0, "A reads none of B's rows");
      t.ok((await count(userA)) > 0, 'A reads its own rows');
      t.equal(await count(userA, sql`${K} <> ${userA}`), 0, 'A reads only its own rows');
      t.equal(await count(null), 0, 'no user context reads nothing');
      const countInOneStatement = async (userId: string | null, where = sql`true`) =>
        withUserStatement(
          db.app,
          userId,
          async (trx) =>
            (await sql<{ n: number }>`select count(*)::int as n from ${T} where ${where}`.execute(trx)).rows[0]!.n,
        );
      t.equal(
        await countInOneStatement(userA, sql`${K} = ${userB}`),
        0,
        "one-statement transaction: A reads none of B's rows",
      );
      t.ok((await countInOneStatement(userA)) > 0, 'one-statement transaction: A reads its own rows');
      t.equal(await countInOneStatement(null), 0, 'one-statement transaction: no user context reads nothing');
      const changed = await withUser(db.app, userA, async (trx) => {
        // Append-only tables (the credits ledger) grant no update or delete at all: nothing to try there.
        const may = (
          await sql<{
            update: boolean;
            delete: boolean;
          }>`select has_table_privilege(current_user, ${table.name}, 'UPDATE') as update,
          has_table_privilege(current_user, ${table.name}, 'DELETE') as delete`.execute(trx)
        ).rows[0]!;
        const updated = may.update
          ? Number((await sql`update ${T} set ${K} = ${K} where ${K} = ${userB}`.execute(trx)).numAffectedRows)
          : 0;
        const deleted = may.delete
          ? Number((await sql`delete from ${T} where ${K} = ${userB}`.execute(trx)).numAffectedRows)
          : 0;
        return updated + deleted;
      });
      t.equal(changed, 0, "A updates and deletes none of B's rows");
      t.ok((await count(userB)) > 0, "B's rows are intact");
      const rowOfB = (
        await sql<{ row: object }>`select to_jsonb(x) as row from ${T} x where ${K} = ${userB} limit 1`.execute(
          db.system,
        )
      ).rows[0]!.row;
      const copy = {
        ...rowOfB,
        ...('id' in rowOfB && table.name !== 'users'
          ? { id: typeof (rowOfB as { id: unknown }).id === 'number' ? -1 : randomUUID() }
          : {}),
      };
      await t.rejects(
        withUser(db.app, userA, (trx) =>
          sql`insert into ${T} select * from jsonb_populate_record(null::${T}, ${JSON.stringify(copy)}::jsonb)`.execute(
            trx,
          ),
        ),
        { code: /^42501$/ },
        'A cannot insert a row owned by B',
      );
    });
  }
});

t.test(
  "billing rows are the system's to write: the runtime role may not insert, change or delete even its own",
  async (t) => {
    const db = await privateDatabase(t);
    const user = (
      await db.system
        .insertInto('users')
        .values({ email: `payer-${randomUUID()}@example.test`, name: 'payer' })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    // Rows the user's own policy would let through: only the missing privilege stops them.
    const own: Record<string, ReturnType<typeof sql>> = {
      subscriptions: sql`insert into subscriptions (id, user_id, status, plan) values (${`sub_${randomUUID()}`}, ${user}, 'active', 'network')`,
      credit_entries: sql`insert into credit_entries (user_id, kind, amount_usd, source) values (${user}, 'grant', 1000, ${`self:${randomUUID()}`})`,
      billing_customers: sql`insert into billing_customers (user_id, provider, customer_id) values (${user}, 'stripe', ${`cus_${randomUUID()}`})`,
      usage_events: sql`insert into usage_events (id, user_id, user_ref, model, provider, input_tokens, output_tokens, total_tokens, occurred_at, day) values (${randomUUID()}, ${user}, ${user}, 'm', 'p', 0, 0, 0, now(), current_date)`,
      usage_daily: sql`insert into usage_daily (day, user_ref, user_id, model, provider, cost_usd) values (current_date, ${user}, ${user}, 'm', 'p', -100)`,
      usage_tools_daily: sql`delete from usage_tools_daily where user_id = ${user}`,
      stripe_events: sql`insert into stripe_events (id, type, created) values (${`evt_${randomUUID()}`}, 'customer.subscription.deleted', now())`,
    };
    for (const [table, statement] of Object.entries(own)) {
      await t.rejects(
        withUser(db.app, user, (trx) => statement.execute(trx)),
        { code: /^42501$/, message: new RegExp(`permission denied for table ${table}`) },
        `${table}: permission denied`,
      );
    }
    for (const table of ['subscriptions', 'usage_daily', 'billing_customers', 'local_checkouts']) {
      await t.rejects(
        withUser(db.app, user, (trx) =>
          sql`update ${sql.table(table)} set user_id = user_id where user_id = ${user}`.execute(trx),
        ),
        { code: /^42501$/ },
        `${table}: no update`,
      );
    }
    t.equal(
      (await db.system.selectFrom('subscriptions').select('id').where('user_id', '=', user).execute()).length,
      0,
      'no plan was made',
    );
  },
);
