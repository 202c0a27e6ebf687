import type { Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from './columns.ts';

/** A user's link to an external identity: `google`, `github`, `wallet`, `farcaster`. */
export interface ProviderAccountsTable {
  id: Generated<string>;
  user_id: string;
  provider: string;
  provider_subject: string;
  email: string | null;
  access_token_sealed: string | null;
  refresh_token_sealed: string | null;
  token_metadata_sealed: string | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  key_hash: string;
  /** The first characters of the key, shown in listings so people can tell keys apart. */
  prefix: string;
  created_at: Generated<Date>;
}

export interface InvitesTable {
  id: Generated<string>;
  /** Who created it. */
  user_id: string;
  name: string | null;
  email: string | null;
  token_hash: string;
  token_sealed: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  used_by: string | null;
}

export interface PasswordResetsTable {
  id: Generated<string>;
  user_id: string;
  request_id: string;
  token_hash: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface PasswordResetRequestsTable {
  id: Generated<string>;
  email: string;
  created_at: Generated<Date>;
}

export interface RiscEventsTable {
  jti: string;
  issuer: string;
  /** `subject-or-email` (security event receiver) or `email` (legacy receiver). */
  match_by: 'subject-or-email' | 'email';
  events: JSONColumnType<Record<string, unknown>>;
  received_at: Generated<Date>;
  processed_at: Timestamp | null;
  outcome: JSONColumnType<Record<string, unknown>> | null;
}

export interface AuthNoncesTable {
  nonce: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface OauthStatesTable {
  state_hash: string;
  provider: string;
  code_verifier_sealed: string;
  /** Hash of the random value the starting browser holds in its OAuth cookie. */
  browser_binding_hash: string;
  /** Hash of an invite carried through the flow, used up when the callback creates the user. */
  invite_token_hash: string | null;
  created_at: Generated<Date>;
  expires_at: Timestamp;
}

export interface EmailEventsTable {
  id: string;
  type: string;
  addresses: string[];
  payload: JSONColumnType<Record<string, unknown>>;
  received_at: Generated<Date>;
}

export interface EmailSuppressionsTable {
  address: string;
  reason: string;
  created_at: Generated<Date>;
}

/** A link that proves an address: the token is born in the mail worker, only its hash is stored. */
export interface EmailVerificationsTable {
  id: Generated<string>;
  user_id: string;
  /** The address the link was sent to; verifying it counts only while it is still the account's. */
  email: string;
  token_hash: string | null;
  created_at: Generated<Date>;
  expires_at: Timestamp | null;
  used_at: Timestamp | null;
}
