import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from './columns.ts';

export type AgentStatus = 'pending' | 'provisioning' | 'deploying' | 'running' | 'active' | 'stopped' | 'suspended' | 'error';
export type ToolsProfile = 'coding' | 'messaging';
export type VerificationType = 'eas' | 'coinbase' | 'ens' | 'webauthn';

export interface AgentsTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  status: ColumnType<AgentStatus, AgentStatus | undefined, AgentStatus>;
  plan: Generated<string>;
  tier: string | null;
  ai_provider: Generated<string>;
  model: string;
  tools_profile: ToolsProfile;
  subdomain: string;
  runtime_version: string | null;
  image: string | null;
  container_id: string | null;
  /** Host port the agent gateway is published on; unique, so allocation cannot race. */
  host_port: number | null;
  /** Where the platform reaches the agent gateway (its /healthz, /readyz, /hooks). */
  gateway_url: string | null;
  gateway_token_sealed: string | null;
  hooks_token_sealed: string | null;
  /** SHA-256 of the agent's own key for the AI gateway. */
  ai_key_hash: string | null;
  config: JSONColumnType<Record<string, unknown>, Record<string, unknown> | undefined, Record<string, unknown>>;
  verified: Generated<boolean>;
  verification_type: VerificationType | null;
  attestation_uid: string | null;
  verifier_address: string | null;
  verification_metadata: JSONColumnType<Record<string, unknown>> | null;
  verified_at: Timestamp | null;
  /** What the web shows of the agent's last failure: one of a fixed set of messages. */
  last_error: string | null;
  /** The failure in the engine's own words, for the backend surface, admins and logs. */
  last_error_detail: string | null;
  started_at: Timestamp | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface SubscriptionsTable {
  id: string;
  user_id: string | null;
  customer_id: string | null;
  customer_email: string | null;
  status: string;
  plan: string | null;
  current_period_end: Timestamp | null;
  /** The subscription ends with its current period (cancelled in the portal, not yet over). */
  cancel_at_period_end: Generated<boolean>;
  updated_at: Timestamp;
}
