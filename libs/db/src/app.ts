import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { sendAhead } from './pipelined-driver.ts';
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

const USER_CONTEXT = "select set_config('app.user_id', $1, true)";

/**
 * Runs `work` in one transaction whose row-level security context is `userId` (none: `null`, which
 * the policies read as "no user" and so match no row). BEGIN and the context go out with work's
 * first statement, in one round trip; if either fails, that statement throws and nothing runs.
 */
export function withUser<T>(db: AppDb, userId: string | null, work: (trx: UserTx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await trx.executeQuery(sendAhead(CompiledQuery.raw(USER_CONTEXT, [userId ?? '']), 'agentyard_user_context'));
    return work(trx);
  });
}
