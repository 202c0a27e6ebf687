import type { ColumnType } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface UserTraderKeysTable {
  user_id: string;
  /** The user's trading-service key, sealed with the versioned keyring (AES-256-GCM). */
  api_key_sealed: string;
  updated_at: Timestamp;
}

/** A trading-service job started through the relay, bound to the user who started it and the key it used. */
export interface TraderJobsTable {
  user_id: string;
  job_id: string;
  /** Started with the platform key (so polled with it), not the user's own. */
  platform_key: boolean;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

/** A trading-service conversation thread started through the relay, bound to its user and the key it runs on. */
export interface TraderThreadsTable {
  user_id: string;
  thread_id: string;
  /** Runs on the platform key (so continued with it), not the user's own. */
  platform_key: boolean;
  last_used_at: ColumnType<Date, Date | string | undefined, Date | string>;
}
