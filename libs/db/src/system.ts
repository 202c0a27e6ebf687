import type { Kysely } from 'kysely';
import { createKysely, type PoolOptions } from './pool.ts';
import type { Database } from './tables/index.ts';

/**
 * The system connection (role with BYPASSRLS) for cross-user work: queue workers and API-key
 * backend routes. Web route code never imports this module.
 */
export type SystemDb = Kysely<Database> & { readonly __system: true };

export function createSystemDb(connectionString: string, options: PoolOptions = {}): SystemDb {
  return createKysely(connectionString, { applicationName: 'agentyard-system', ...options }) as SystemDb;
}
