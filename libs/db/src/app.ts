import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { sendAhead } from './pipelined-driver.ts';
import { createKysely, oneStatementTransaction, type PoolOptions } from './pool.ts';
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

const USER_CONTEXT = { name: 'agentyard_user_context', text: "select set_config('app.user_id', $1, true)" };

/**
 * Runs `work` in one transaction whose row-level security context is `userId` (none: `null`, which
 * the policies read as "no user" and so match no row). BEGIN and the context go out with work's
 * first statement, in one round trip; if either fails, that statement throws and nothing runs.
 */
export function withUser<T>(db: AppDb, userId: string | null, work: (trx: UserTx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await trx.executeQuery(sendAhead(CompiledQuery.raw(USER_CONTEXT.text, [userId ?? '']), USER_CONTEXT.name));
    return work(trx);
  });
}

/**
 * `withUser` for work of exactly one statement (a second one throws): the context and the statement
 * go out together and PostgreSQL runs them in one implicit transaction (one Sync, no BEGIN/COMMIT),
 * so it costs one round trip. If setting the context fails, the statement does not run.
 */
export function withUserStatement<T>(db: AppDb, userId: string | null, work: (trx: UserTx) => Promise<T>): Promise<T> {
  const context = { ...USER_CONTEXT, values: [userId ?? ''] };
  return work(oneStatementTransaction(db, (connection, query) => connection.executeAfter(context, query)));
}

/** A transaction advisory lock on a text key, hashed to 64 bits: a collision only makes two callers take turns needlessly. */
const TRANSACTION_LOCK = {
  name: 'agentyard_transaction_lock',
  text: 'select pg_advisory_xact_lock(hashtextextended($1, 0))',
};

/** Inside a transaction: waits until no other transaction holds `key`'s lock, then holds it to commit. */
export async function lockForTransaction(trx: Transaction<Database>, key: string): Promise<void> {
  await trx.executeQuery(CompiledQuery.raw(TRANSACTION_LOCK.text, [key]));
}

/**
 * Work of exactly one statement (a second one throws) that callers with the same `key` run in
 * turns: a transaction advisory lock on the key, then the statement, in one implicit transaction
 * (one Sync, one round trip); the lock is released at its end. In READ COMMITTED the statement's
 * snapshot is taken once the lock is held, so it sees everything the previous holder committed.
 */
export function withTransactionLock<T>(db: AppDb, key: string, work: (trx: UserTx) => Promise<T>): Promise<T> {
  const lock = { ...TRANSACTION_LOCK, values: [key] };
  return work(oneStatementTransaction(db, (connection, query) => connection.executeAfter(lock, query)));
}
