import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from './columns.ts';

export type SwarmRunMode = 'broadcast' | 'first' | 'all';
export type SwarmRunStatus = 'pending' | 'running' | 'completed' | 'failed';
export type SwarmMemberStatus = 'pending' | 'running' | 'delivered' | 'answered' | 'failed' | 'skipped';

/** A named group of one user's agents. */
export interface SwarmsTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  created_at: Generated<Date>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface SwarmMembersTable {
  swarm_id: string;
  agent_id: string;
  user_id: string;
  position: number;
}

/** One message sent to every member of a swarm. */
export interface SwarmRunsTable {
  id: Generated<string>;
  swarm_id: string;
  user_id: string;
  mode: SwarmRunMode;
  message: string;
  status: ColumnType<SwarmRunStatus, SwarmRunStatus | undefined, SwarmRunStatus>;
  created_at: Generated<Date>;
  finished_at: Timestamp | null;
}

/** One member's turn of a run: its answer or why it has none. */
export interface SwarmRunMembersTable {
  run_id: string;
  agent_id: string;
  user_id: string;
  position: number;
  status: ColumnType<SwarmMemberStatus, SwarmMemberStatus | undefined, SwarmMemberStatus>;
  answer: string | null;
  error: string | null;
  tokens: number | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

/** An OpenClaw the user runs on their own machine, linked with their key. */
export interface InstallationsTable {
  id: Generated<string>;
  user_id: string;
  kind: 'home' | 'link';
  mode: 'local' | 'remote';
  name: string | null;
  gateway_url: string | null;
  gateway_token_sealed: string | null;
  version: string | null;
  last_seen_at: Timestamp | null;
  created_at: Generated<Date>;
}
