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

/** One agent's previous configuration and model (the 10 newest kept per agent). */
export interface AgentConfigBackupsTable {
  id: string;
  agent_id: string;
  user_id: string;
  config: Json;
  model: string;
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
  /** Null for a one-shot task (`run_at`). */
  cron_schedule: string | null;
  prompt: string;
  enabled: Generated<boolean>;
  /** The IANA zone the cron is read in. */
  timezone: Generated<string>;
  run_at: Timestamp | null;
  missed_run_policy: Generated<'skip' | 'run-once'>;
  overlap_policy: Generated<'skip' | 'queue'>;
  last_run: Timestamp | null;
  next_run: Timestamp | null;
  last_delivered_due: Timestamp | null;
  last_error: string | null;
  last_error_at: Timestamp | null;
  failed_attempts: Generated<number>;
  claimed_by: string | null;
  claim_expires_at: Timestamp | null;
  last_status: ScheduledRunStatus | null;
  consecutive_failures: Generated<number>;
  /** Why the task switched itself off (the failure limit), until it is enabled again. */
  paused_reason: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type ScheduledRunStatus =
  | 'pending'
  | 'delivered'
  | 'answered'
  | 'failed'
  | 'missed'
  | 'ran-late'
  | 'skipped-overlap'
  | 'skipped-no-credits';

/** One firing of a scheduled task (or a run by hand), whatever became of it. */
export interface ScheduledTaskRunsTable {
  id: Generated<string>;
  task_id: string;
  user_id: string;
  due_at: Timestamp;
  manual: Generated<boolean>;
  status: ScheduledRunStatus;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  reply: string | null;
  tokens: number | null;
  /** numeric: PostgreSQL answers it as a string. */
  cost_usd: string | null;
  error: string | null;
  created_at: Generated<Date>;
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
  last_status: ColumnType<HeartbeatRunStatus | null, HeartbeatRunStatus | null | undefined, HeartbeatRunStatus | null>;
  updated_at: Generated<Date>;
}

export type HeartbeatRunStatus = 'delivered' | 'failed' | 'skipped-no-credits' | 'skipped-spend-limit' | 'skipped-idle';

/** One heartbeat firing and what became of it. */
export interface HeartbeatRunsTable {
  id: Generated<string>;
  user_id: string;
  agent_ref: string;
  due_at: Timestamp;
  status: HeartbeatRunStatus;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  error: string | null;
  created_at: Generated<Date>;
}
