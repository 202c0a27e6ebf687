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

/** Whether a test has opened this run's database through `systemDb()` or `appDb()`. */
export const runPoolsOpen = () => system !== undefined || app !== undefined;

/** Closes the pools `systemDb()` and `appDb()` opened. */
export async function closeRunPools(): Promise<void> {
  await Promise.all([system?.destroy(), app?.destroy()]);
  system = app = undefined;
}

export function uniqueEmail(tag = 'user'): string {
  return `${tag}-${randomUUID().slice(0, 12)}@example.test`;
}

/**
 * A user row made directly (no password), for tests of other areas. `plan` (other than `free`): the user also holds an
 * active subscription of that plan, as the Stripe webhook or the local checkout leaves it.
 */
export async function createUserRow(overrides: { email?: string; name?: string; plan?: string } = {}) {
  const email = overrides.email ?? uniqueEmail();
  const user = await systemDb()
    .insertInto('users')
    .values({ email, name: overrides.name ?? email })
    .returning(['id', 'email', 'name'])
    .executeTakeFirstOrThrow();
  if (overrides.plan && overrides.plan !== 'free') await subscribeUser(user.id, overrides.plan);
  return user;
}

/** An active (or `status`) subscription of `plan` for a user, as the webhook leaves it; its id. */
export async function subscribeUser(userId: string, plan: string, status = 'active'): Promise<string> {
  const id = `sub_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  await systemDb()
    .insertInto('subscriptions')
    .values({ id, user_id: userId, status, plan, updated_at: new Date() })
    .execute();
  return id;
}
