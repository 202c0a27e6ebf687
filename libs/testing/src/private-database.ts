import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { createAppDb, type AppDb } from '@agentyard/db';
import { connectionUrl, dropDatabase, ROLES } from '@agentyard/db/admin';
import { createSystemDb, type SystemDb } from '@agentyard/db/system';
import pg from 'pg';

export interface PrivateDatabase {
  name: string;
  urls: { DATABASE_URL: string; DATABASE_SYSTEM_URL: string; DATABASE_OWNER_URL: string };
  app: AppDb;
  system: SystemDb;
}

/**
 * A database of this test's own, cloned from the run's migrated template (fast), dropped when `t`
 * ends: for tests that assert on whole tables while other test files run in parallel.
 */
export async function privateDatabase(t: Test): Promise<PrivateDatabase> {
  const admin = process.env.DATABASE_ADMIN_URL!;
  const template = process.env.TEST_TEMPLATE_DATABASE!;
  const name = `${template.replace(/_tpl$/, '')}_p${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}" OWNER "${ROLES.owner}"`);
  } finally {
    await client.end();
  }
  const urls = {
    DATABASE_URL: connectionUrl(admin, { user: ROLES.app, database: name }),
    DATABASE_SYSTEM_URL: connectionUrl(admin, { user: ROLES.system, database: name }),
    DATABASE_OWNER_URL: connectionUrl(admin, { user: ROLES.owner, database: name }),
  };
  const app = createAppDb(urls.DATABASE_URL, { max: 4, allowExitOnIdle: true });
  const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2, allowExitOnIdle: true });
  t.teardown(async () => {
    await Promise.all([app.destroy(), system.destroy()]);
    await dropDatabase(admin, name);
  });
  return { name, urls, app, system };
}
