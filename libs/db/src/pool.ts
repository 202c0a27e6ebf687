import { Kysely } from 'kysely';
import pg from 'pg';
import { PipelinedPostgresDialect } from './pipelined-driver.ts';
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
  pool.on('error', () => { /* an idle client died; the pool replaces it on the next checkout */ });
  return new Kysely<Database>({ dialect: new PipelinedPostgresDialect(pool) });
}
