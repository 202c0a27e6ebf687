import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'revoked';
export type WorkflowNodeType = 'trigger' | 'action' | 'condition' | 'output';

export interface AgentConfigsTable {
  user_id: string;
  config: Json;
  updated_at: Generated<Date>;
}

export interface ConfigBackupsTable {
  id: string;
  user_id: string;
  config: Json;
  created_at: Generated<Date>;
}

export interface DevicesTable {
  id: string;
  user_id: string;
  agent_id: string | null;
  name: string;
  ip: string | null;
  status: ColumnType<DeviceStatus, DeviceStatus | undefined, DeviceStatus>;
  first_seen: Generated<Date>;
  last_seen: Generated<Date>;
}

export interface WorkflowsTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  description: string | null;
  enabled: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface WorkflowNodesTable {
  id: Generated<string>;
  seq: Generated<string>;
  workflow_id: string;
  user_id: string;
  type: WorkflowNodeType;
  config: Generated<string>;
  position: Generated<string>;
  created_at: Generated<Date>;
}

export interface ScheduledTasksTable {
  id: Generated<string>;
  user_id: string;
  agent_id: string;
  name: string;
  description: string | null;
  cron_schedule: string;
  prompt: string;
  enabled: Generated<boolean>;
  last_run: Timestamp | null;
  next_run: Timestamp | null;
  last_delivered_due: Timestamp | null;
  last_error: string | null;
  last_error_at: Timestamp | null;
  failed_attempts: Generated<number>;
  claimed_by: string | null;
  claim_expires_at: Timestamp | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface HeartbeatsTable {
  user_id: string;
  agent_ref: string;
  agent_id: string | null;
  frequency: Generated<string>;
  enabled: Generated<boolean>;
  last_heartbeat: Timestamp | null;
  next_heartbeat: Timestamp | null;
  last_error: string | null;
  updated_at: Generated<Date>;
}
