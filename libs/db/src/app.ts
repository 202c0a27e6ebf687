import { sql, type Kysely, type Transaction } from 'kysely';
import { createKysely, type PoolOptions } from './pool.ts';
import type { Database } from './tables/index.ts';

/**
 * The runtime connection: a role that is NOSUPERUSER and NOBYPASSRLS and owns no table, so every
 * row it sees is filtered by the row-level policies on `app.user_id`.
 */
export type AppDb = Kysely<Database>;
export type UserTx = Transaction<Database>;

export function createAppDb(connectionString: string, options: PoolOptions = {}): AppDb {
  return createKysely(connectionString, options);
}

/**
 * Runs `work` in one transaction whose row-level security context is `userId` (none: `null`, which
 * the policies read as "no user" and so match no row).
 */
export function withUser<T>(db: AppDb, userId: string | null, work: (trx: UserTx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('app.user_id', ${userId ?? ''}, true)`.execute(trx);
    return work(trx);
  });
}
