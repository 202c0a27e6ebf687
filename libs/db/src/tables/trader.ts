import type { ColumnType } from 'kysely';

export interface UserTraderKeysTable {
  user_id: string;
  /** The user's trading-service key, sealed with the versioned keyring (AES-256-GCM). */
  api_key_sealed: string;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}
