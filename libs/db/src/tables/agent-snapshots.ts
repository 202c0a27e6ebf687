import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** bigint: read as a string by the driver, written as a number. */
type BigCount = ColumnType<string | null, number | null | undefined, number | null>;

export type SnapshotReason =
  | 'manual'
  | 'scheduled'
  | 'before-update'
  | 'before-repair'
  | 'before-reset'
  | 'before-restore'
  | 'import';
export type SnapshotStatus = 'pending' | 'ready' | 'failed';

/** One snapshot of an agent (its archive is in the snapshot store under `id`). */
export interface AgentSnapshotsTable {
  id: Generated<string>;
  user_id: string;
  agent_id: string;
  label: string | null;
  reason: SnapshotReason;
  status: ColumnType<SnapshotStatus, SnapshotStatus | undefined, SnapshotStatus>;
  size_bytes: BigCount;
  /** SHA-256 of the archive as stored, hex. */
  sha256: string | null;
  openclaw_version: string | null;
  created_at: Generated<Date>;
  completed_at: Timestamp | null;
}
