import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { createAppDb, type AppDb } from '@agentyard/db';
import { connectionUrl, dropDatabase, ROLES } from '@agentyard/db/admin';
import { createSystemDb, type SystemDb } from '@agentyard/db/system';
import pg from 'pg';
import { closeRunPools, runPoolsOpen } from './database.ts';

export interface PrivateDatabase {
  name: string;
  urls: { DATABASE_URL: string; DATABASE_SYSTEM_URL: string; DATABASE_OWNER_URL: string };
  app: AppDb;
  system: SystemDb;
}

/** A new database cloned from the run's migrated template (fast), and the roles' URLs to it. */
async function clonedDatabase(): Promise<{ name: string; urls: PrivateDatabase['urls'] }> {
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
  return {
    name,
    urls: {
      DATABASE_URL: connectionUrl(admin, { user: ROLES.app, database: name }),
      DATABASE_SYSTEM_URL: connectionUrl(admin, { user: ROLES.system, database: name }),
      DATABASE_OWNER_URL: connectionUrl(admin, { user: ROLES.owner, database: name }),
    },
  };
}

/**
 * A database of this test's own, dropped when `t` ends: for tests that assert on whole tables while
 * other test files run in parallel.
 */
export async function privateDatabase(t: Test): Promise<PrivateDatabase> {
  const { name, urls } = await clonedDatabase();
  const app = createAppDb(urls.DATABASE_URL, { max: 4, allowExitOnIdle: true });
  const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2, allowExitOnIdle: true });
  t.teardown(async () => {
    await Promise.all([app.destroy(), system.destroy()]);
    await dropDatabase(process.env.DATABASE_ADMIN_URL!, name);
  });
  return { name, urls, app, system };
}

/**
 * Points the whole test file at a database of its own: `process.env`'s URLs, so `appDb()`,
 * `systemDb()` and every config loaded afterwards use it. For files whose workers act on every row
 * of a table (the scheduler's batch delivers every task due at a time), which rows of test files
 * running beside them would disturb. Call it on the root test before anything opens a database;
 * its teardown, registered first, runs last.
 */
export async function useOwnDatabase(t: Test): Promise<void> {
  if (runPoolsOpen()) throw new Error('useOwnDatabase: the run database is open already; call it first');
  const { name, urls } = await clonedDatabase();
  Object.assign(process.env, urls);
  t.teardown(async () => {
    await closeRunPools();
    await dropDatabase(process.env.DATABASE_ADMIN_URL!, name);
  });
}
