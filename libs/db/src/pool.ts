import {
  Kysely,
  Transaction,
  type CompiledQuery,
  type ConnectionProvider,
  type Driver,
  type QueryResult,
} from 'kysely';
import pg from 'pg';
import { registerDependency } from '@agentyard/observability';
import { PipelinedPostgresDialect, type PipelinedConnection } from './pipelined-driver.ts';
import type { Database } from './tables/index.ts';

// int8 (counts, sums) as numbers and numeric as strings: exact decimals stay exact.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface PoolOptions {
  max?: number;
  applicationName?: string;
  /** Let the process exit while idle connections remain (tests, scripts). */
  allowExitOnIdle?: boolean;
}

export function createKysely(connectionString: string, options: PoolOptions = {}): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    statement_timeout: 15000,
    allowExitOnIdle: options.allowExitOnIdle ?? false,
    pipeline: true,
  });
  pool.on('error', () => {
    /* an idle client died; the pool replaces it on the next checkout */
  });
  // pg-pool listens for a client's errors only while it is idle: a checked-out client whose server
  // restarts emits 'error' with no listener, which ends the process. Its queries fail with the
  // error, and the pool drops it on release.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const dialect = new PipelinedPostgresDialect(pool);
  const db = new Kysely<Database>({ dialect });
  // Readiness asks this pool for a connection and one round trip; a destroyed pool is no longer asked.
  const withdrawCheck = registerDependency('postgres', () => pool.query('select 1'));
  const destroy = db.destroy.bind(db);
  db.destroy = () => {
    withdrawCheck();
    return destroy();
  };
  handles.set(db, { dialect, driver: dialect.createDriver() });
  return db;
}

// What a Transaction over one of our databases is made of (a Transaction never uses its driver: it refuses transaction(), connection() and destroy()).
const handles = new WeakMap<Kysely<Database>, { dialect: PipelinedPostgresDialect; driver: Driver }>();

/**
 * A transaction handle on which exactly one statement runs, by `execute` on a pooled connection; a
 * second statement throws. Domain functions take it like any transaction.
 */
export function oneStatementTransaction(
  db: Kysely<Database>,
  execute: (connection: PipelinedConnection, query: CompiledQuery) => Promise<QueryResult<unknown>>,
): Transaction<Database> {
  const handle = handles.get(db);
  if (!handle) throw new Error('oneStatementTransaction needs a database made by createKysely');
  const executor = db.getExecutor();
  let used = false;
  const provider: ConnectionProvider = {
    provideConnection(consumer) {
      if (used) return Promise.reject(new Error('a one-statement transaction ran a second statement: use withUser'));
      used = true;
      return executor.provideConnection((connection) =>
        consumer({
          executeQuery: <R>(query: CompiledQuery) =>
            execute(connection as PipelinedConnection, query) as Promise<QueryResult<R>>,
          streamQuery: () => {
            throw new Error('streaming queries are not supported');
          },
        }),
      );
    },
  };
  return new Transaction<Database>({
    config: { dialect: handle.dialect },
    ...handle,
    executor: executor.withConnectionProvider(provider),
  });
}
