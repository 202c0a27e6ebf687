import t from 'tap';
import { ensureRoles, ROLES } from '@agentyard/db/admin';
import pg from 'pg';

t.test('bootstraps that start together take turns and leave the roles right', async (t) => {
  const adminUrl = process.env.DATABASE_ADMIN_URL!;
  await Promise.all(Array.from({ length: 8 }, () => ensureRoles(adminUrl)));
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  t.teardown(() => client.end());
  const { rows } = await client.query<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }>(
    'select rolname, rolsuper, rolbypassrls from pg_roles where rolname = any($1) order by rolname',
    [Object.values(ROLES)],
  );
  t.same(
    rows.map((r) => [r.rolname, r.rolsuper, r.rolbypassrls]).sort(),
    [
      [ROLES.app, false, false],
      [ROLES.owner, false, false],
      [ROLES.system, false, true],
    ].sort(),
  );
});
