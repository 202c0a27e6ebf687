import type { Generated } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface UsersTable {
  id: Generated<string>;
  email: string;
  name: string;
  password_hash: string | null;
  referral_code: string | null;
  runtime_url: string | null;
  runtime_instance_id: string | null;
  external_signin_disabled: Generated<boolean>;
  /** When the address was proven to be the account holder's (null: never). */
  email_verified_at: Timestamp | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface SessionsTable {
  id: Generated<string>;
  user_id: string;
  token_hash: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
}
