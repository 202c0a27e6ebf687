import type { ColumnType, JSONColumnType } from 'kysely';

/** One messaging channel an agent is bound to: its credentials sealed (the vault), its settings in the clear. */
export interface AgentChannelsTable {
  agent_id: string;
  user_id: string;
  channel: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  /** The channel's credentials as JSON, sealed with the platform keyring (bound to agent and channel). */
  credentials_sealed: string;
  /** At most the last four characters of the main credential, for its owner to recognise it. */
  credential_hint: string;
  settings: JSONColumnType<Record<string, unknown>, Record<string, unknown> | undefined, Record<string, unknown>>;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}
