import type { AgentSnapshotsTable, AgentsTable, Database, Kysely, Selectable, SnapshotReason } from '@agentyard/db';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import { SnapshotErrors } from '../../errors.ts';

export type SnapshotRow = Selectable<AgentSnapshotsTable>;

/** The lifecycle queue's job that takes one snapshot; its data is the snapshot's id (no secret). */
export const TAKE_SNAPSHOT_JOB = 'take-snapshot';
export interface TakeSnapshotJob {
  snapshotId: string;
}
/** One job per snapshot: queuing it twice takes it once. */
export const snapshotJobId = (snapshotId: string) => `snapshot-${snapshotId}`;

/** The lifecycle queue's scheduled job that finds agents due for their daily snapshot (one worker acts each time). */
export const SNAPSHOT_SWEEP_JOB = 'snapshot-sweep';
/** One agent's scheduled snapshot; its data is the agent's id. */
export const SCHEDULED_SNAPSHOT_JOB = 'scheduled-snapshot';
export interface ScheduledSnapshotJob {
  agentId: string;
}
/** One scheduled snapshot per agent and period, however many sweeps or workers find it due. */
export const scheduledSnapshotJobId = (agentId: string, everyMs: number, now = Date.now()) =>
  `scheduled-snapshot-${agentId}-${Math.floor(now / everyMs)}`;

export async function enqueueSnapshot(queues: QueueSet, snapshotId: string): Promise<void> {
  await queues.add(QUEUES.lifecycle, TAKE_SNAPSHOT_JOB, { snapshotId } satisfies TakeSnapshotJob, {
    jobId: snapshotJobId(snapshotId),
    attempts: 3,
    backoff: { type: 'exponential', delay: 2000 },
  });
}

/** A snapshot as its owner sees it. */
export const snapshotView = (row: SnapshotRow) => ({
  id: row.id,
  label: row.label,
  reason: row.reason,
  sizeBytes: row.size_bytes === null ? null : Number(row.size_bytes),
  sha256: row.sha256,
  openclawVersion: row.openclaw_version,
  createdAt: new Date(row.created_at).toISOString(),
  status: row.status,
});

// Each function below takes the agent already found to be the caller's (row-level security on the
// web, the caller's x-user-id on the backend) and reaches only that agent's snapshots.

export async function listSnapshots(db: Kysely<Database>, agentId: string): Promise<SnapshotRow[]> {
  return db
    .selectFrom('agent_snapshots')
    .selectAll()
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Bytes the owner's snapshot archives take together (ready ones: a pending or failed one holds none). */
export async function snapshotBytesOf(db: Kysely<Database>, userId: string): Promise<number> {
  const { bytes } = await db
    .selectFrom('agent_snapshots')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('size_bytes'), eb.lit(0)).as('bytes'))
    .where('user_id', '=', userId)
    .where('status', '=', 'ready')
    .executeTakeFirstOrThrow();
  return Number(bytes);
}

/** A snapshot row to be taken (pending). */
export async function recordSnapshot(
  db: Kysely<Database>,
  agent: Pick<Selectable<AgentsTable>, 'id' | 'user_id'>,
  reason: SnapshotReason,
  label: string | null = null,
): Promise<SnapshotRow> {
  return db
    .insertInto('agent_snapshots')
    .values({ agent_id: agent.id, user_id: agent.user_id, reason, label })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSnapshot(db: Kysely<Database>, agentId: string, snapshotId: string): Promise<SnapshotRow> {
  const row = await db
    .selectFrom('agent_snapshots')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('id', '=', snapshotId)
    .executeTakeFirst();
  if (!row) throw SnapshotErrors.notFound();
  return row;
}

/** A snapshot that can be read back (downloaded, restored, cloned from). */
export async function readySnapshot(db: Kysely<Database>, agentId: string, snapshotId: string): Promise<SnapshotRow> {
  const row = await findSnapshot(db, agentId, snapshotId);
  if (row.status !== 'ready') throw SnapshotErrors.notReady();
  return row;
}

export async function deleteSnapshotRecord(db: Kysely<Database>, agentId: string, snapshotId: string): Promise<void> {
  const deleted = await db
    .deleteFrom('agent_snapshots')
    .where('agent_id', '=', agentId)
    .where('id', '=', snapshotId)
    .executeTakeFirst();
  if (deleted.numDeletedRows === 0n) throw SnapshotErrors.notFound();
}
