import t from 'tap';
import pg from 'pg';

// The edge resolves a caller on every request with one of these lookups. A `language sql` function
// with a SET clause is never inlined, so PostgreSQL parses and plans its body on each call; plpgsql
// caches the plan per connection (bench:edge: the run database's CPU per request through the edge
// ~600 µs as SQL, ~420 as plpgsql). A migration that recreates one must keep it plpgsql.
t.test("the edge's per-request identity lookups are plpgsql, their plans cached", async (t) => {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  t.teardown(() => client.end());
  const { rows } = await client.query<{ proname: string; lanname: string; columns: string[] }>(
    `select p.proname, l.lanname, p.proargnames as columns from pg_proc p join pg_language l on l.oid = p.prolang
      where p.proname in ('auth_session_identity', 'auth_api_key_identity') order by p.proname`,
  );
  t.same(
    rows.map((r) => [r.proname, r.lanname]),
    [
      ['auth_api_key_identity', 'plpgsql'],
      ['auth_session_identity', 'plpgsql'],
    ],
  );
  for (const row of rows)
    t.ok(row.columns.includes('email_verified'), `${row.proname} still answers whether the address is verified`);
});
