import { randomUUID } from 'node:crypto';
import { createAppDb, type AppDb } from '@agentyard/db';
import { createSystemDb, type SystemDb } from '@agentyard/db/system';

let system: SystemDb | undefined;
let app: AppDb | undefined;

/** This run's database through the system role, for setting up and asserting rows (tests only). */
export function systemDb(): SystemDb {
  return (system ??= createSystemDb(process.env.DATABASE_SYSTEM_URL!, { max: 4, allowExitOnIdle: true }));
}

/** This run's database through the runtime role, shared by the apps a test file builds. */
export function appDb(): AppDb {
  return (app ??= createAppDb(process.env.DATABASE_URL!, { max: 8, allowExitOnIdle: true }));
}

export function uniqueEmail(tag = 'user'): string {
  return `${tag}-${randomUUID().slice(0, 12)}@example.test`;
}

/** A user row made directly (no password), for tests of other areas. */
export async function createUserRow(overrides: { email?: string; name?: string; plan?: string } = {}) {
  const email = overrides.email ?? uniqueEmail();
  return systemDb().insertInto('users')
    .values({ email, name: overrides.name ?? email, plan: overrides.plan ?? 'free' })
    .returning(['id', 'email', 'name']).executeTakeFirstOrThrow();
}
