import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from './columns.ts';

export type AgentStatus =
  | 'pending'
  | 'provisioning'
  | 'deploying'
  | 'running'
  | 'active'
  | 'stopped'
  | 'suspended'
  | 'error';
export type AgentHibernation = 'paused' | 'stopped';
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
  /** While `suspended`: how deep the idle agent sleeps (paused: memory kept, no CPU; stopped: its state disk only). */
  hibernation: ColumnType<AgentHibernation | null, AgentHibernation | null | undefined, AgentHibernation | null>;
  /** When it was suspended: names the hibernation a wake ends. */
  suspended_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** While its owner's plan no longer covers it: when its grace period ends and it stops. */
  stops_beyond_plan_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  /** The agent and snapshot a clone was made from (plain ids: the source may be gone since). */
  cloned_from_agent_id: ColumnType<string | null, string | null | undefined, string | null>;
  cloned_from_snapshot_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** A restore under way: the snapshot it brings back and the before-restore one of what it replaces (cleared once the agent is up on it). */
  restoring_snapshot_id: ColumnType<string | null, string | null | undefined, string | null>;
  restoring_before_snapshot_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** A clone being seeded: the snapshot it is given the state of (cleared once its provisioning is queued). */
  seeding_snapshot_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When its provisioning was queued, where that is not its creation (a clone once seeded): the provisioning deadline counts from it. */
  provisioning_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
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

/** An agent its owner deleted from the web: only its id, so a repeated delete answers as the first did. */
export interface DeletedAgentsTable {
  id: string;
  user_id: string;
  deleted_at: ColumnType<Date, Date | string | undefined, never>;
}
