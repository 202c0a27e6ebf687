import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import pg from 'pg';

/** The three roles of rule 2: the owner migrates, the app serves web requests, the system runs cross-user work. */
export const ROLES = {
  owner: 'agentyard_owner',
  app: 'agentyard_app',
  system: 'agentyard_system',
} as const;

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

/** `base` with its user and database (and password, when given) replaced. */
export function connectionUrl(base: string, parts: { user?: string; password?: string; database?: string }): string {
  const url = new URL(base);
  if (parts.user !== undefined) url.username = parts.user;
  if (parts.password !== undefined) url.password = parts.password;
  if (parts.database !== undefined) url.pathname = `/${parts.database}`;
  return url.toString();
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** An arbitrary advisory-lock key, the same in every process that bootstraps roles. */
const ROLE_BOOTSTRAP_LOCK = 0x61677964; // 'agyd'

/** Creates the roles when absent and keeps their flags right (idempotent). Needs a superuser URL. */
export async function ensureRoles(
  adminUrl: string,
  passwords: Partial<Record<keyof typeof ROLES, string>> = {},
): Promise<void> {
  const flags: Record<keyof typeof ROLES, string> = {
    owner: 'LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE',
    app: 'LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE',
    system: 'LOGIN NOSUPERUSER BYPASSRLS NOCREATEDB NOCREATEROLE',
  };
  await withClient(adminUrl, async (client) => {
    // Concurrent bootstraps (two test runs starting together) would collide on the same role rows
    // ("tuple concurrently updated"): they take turns. The lock ends with the session at the latest.
    await client.query('select pg_advisory_lock($1)', [ROLE_BOOTSTRAP_LOCK]);
    for (const [key, role] of Object.entries(ROLES) as [keyof typeof ROLES, string][]) {
      const password = passwords[key] ? ` PASSWORD ${literal(passwords[key]!)}` : '';
      await client.query(`DO $$ BEGIN CREATE ROLE ${ident(role)}; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
      await client.query(`ALTER ROLE ${ident(role)} ${flags[key]}${password}`);
    }
    await client.query('select pg_advisory_unlock($1)', [ROLE_BOOTSTRAP_LOCK]);
  });
}

export async function databaseExists(adminUrl: string, name: string): Promise<boolean> {
  return withClient(
    adminUrl,
    async (client) => (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1,
  );
}

/** Creates `name` owned by the owner role, with connect rights for the app and system roles. */
export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE ${ident(name)} OWNER ${ident(ROLES.owner)}`);
    await client.query(`REVOKE ALL ON DATABASE ${ident(name)} FROM PUBLIC`);
    await client.query(
      `GRANT CONNECT, TEMPORARY ON DATABASE ${ident(name)} TO ${ident(ROLES.app)}, ${ident(ROLES.system)}`,
    );
  });
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`));
}

/** Applies every pending migration as the owner role; throws with the failing migration's name. */
export async function migrateToLatest(ownerUrl: string): Promise<string[]> {
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: ownerUrl, max: 1 }) }),
  });
  try {
    // Work in parallel lands migrations with interleaved names; each stands alone, so a pending
    // one named before the last applied one is still applied rather than refused.
    const migrator = new Migrator({
      db,
      provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
      allowUnorderedMigrations: true,
    });
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === 'Error');
    if (error) throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
    return (results ?? []).map((r) => r.migrationName);
  } finally {
    await db.destroy();
  }
}

/** Row-level-security facts of a role, for the isolation test. */
export async function roleFlags(url: string): Promise<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }> {
  return withClient(
    url,
    async (client) =>
      (await client.query('select rolname, rolsuper, rolbypassrls from pg_roles where rolname = current_user')).rows[0],
  );
}

export { sql };
