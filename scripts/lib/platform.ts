import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import {
  connectionUrl,
  createDatabase,
  databaseExists,
  ensureRoles,
  migrateToLatest,
  ROLES,
} from '@agentyard/db/admin';

export const ADMIN_URL = process.env.DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one of the project's idempotent infra scripts, its progress on our stderr; returns its stdout. */
export function infra(script: string, args: string[] = []): string {
  return execFileSync('bash', [join(repoRoot, 'infra', script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  }).trim();
}

/** PostgreSQL and Redis from the local installation, started when not running. */
export function ensureDataServices(): void {
  infra('postgres/up.sh');
  infra('redis/up.sh');
}

/** The three database URLs (owner, app, system) of `database`, on the admin URL's server. */
export function databaseUrls(database: string) {
  const url = (role: keyof typeof ROLES) =>
    connectionUrl(ADMIN_URL, { user: ROLES[role], password: ROLE_PASSWORDS[role] ?? '', database });
  return { DATABASE_OWNER_URL: url('owner'), DATABASE_URL: url('app'), DATABASE_SYSTEM_URL: url('system') };
}

/** Role passwords where the server wants them (docker-compose); local trust auth needs none. */
const ROLE_PASSWORDS: Partial<Record<keyof typeof ROLES, string>> = Object.fromEntries(
  Object.entries({
    owner: process.env.OWNER_DB_PASSWORD,
    app: process.env.APP_DB_PASSWORD,
    system: process.env.SYSTEM_DB_PASSWORD,
  }).filter(([, value]) => value),
);

/** Roles, database (created when absent) and every migration; returns the URLs. */
export async function prepareDatabase(database: string) {
  await ensureRoles(ADMIN_URL, ROLE_PASSWORDS);
  if (!(await databaseExists(ADMIN_URL, database))) await createDatabase(ADMIN_URL, database);
  const urls = databaseUrls(database);
  await migrateToLatest(urls.DATABASE_OWNER_URL);
  return urls;
}
