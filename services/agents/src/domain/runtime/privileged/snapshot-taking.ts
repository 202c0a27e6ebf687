import { type Readable, Transform } from 'node:stream';
import { sql, type SnapshotReason } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { SnapshotArchiveError, SnapshotTooLargeError, verifyAgentArchive } from '@agentyard/runtime';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import { isAgentBusy, SnapshotErrors } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import { recordSnapshot, snapshotJobId, type SnapshotRow } from '../snapshots.ts';
import {
  type AgentSnapshotOptions,
  capture,
  captureOrFail,
  hasState,
  keepNewest,
  markFailed,
  RESTORE_MAX_BYTES,
} from './snapshot-capture.ts';
import { loadAgent } from './lifecycle-status.ts';
import { clone, finishClones } from './snapshot-cloning.ts';
import { finishRestores, restore } from './snapshot-restoring.ts';
import { sweepScheduled, takeScheduled } from './scheduled-snapshots.ts';

/** Automatic snapshots of each reason kept per agent (the newest); older ones are deleted as a new one is taken. */
const AUTOMATIC_KEPT = 3;

/**
 * The worker's job: takes the pending snapshot `snapshotId`. Idempotent: a snapshot already
 * taken, failed or deleted (or its agent) is left as it is. `lastAttempt` marks it failed on error.
 */
async function take(options: AgentSnapshotOptions, snapshotId: string, lastAttempt: boolean): Promise<string> {
  const { db, store } = options;
  const row = await db.selectFrom('agent_snapshots').selectAll().where('id', '=', snapshotId).executeTakeFirst();
  if (!row) return 'deleted';
  if (row.status !== 'pending') return `skipped (${row.status})`;
  try {
    return await options.exclusive(row.agent_id, async () => {
      const agent = await loadAgent(db, row.agent_id);
      if (!agent) return 'agent deleted';
      // Nothing whole is stored for a pending snapshot: what is under its id, an attempt killed mid-copy left.
      await store.remove(row.id);
      const { pausedMs } = await capture(options, agent, row);
      return `taken (paused ${Math.round(pausedMs)} ms)`;
    });
  } catch (error) {
    if (lastAttempt || (error as { statusCode?: number }).statusCode === 501) {
      await markFailed(db, snapshotId);
      await store.remove(snapshotId);
      return `failed: ${(error as Error).message}`;
    }
    throw error;
  }
}

/** Pending snapshots older than `minAgeMs` (the oldest hundred). */
const stalePending = (db: SystemDb, minAgeMs: number) =>
  db
    .selectFrom('agent_snapshots')
    .select(['id', 'agent_id'])
    .where('status', '=', 'pending')
    .where('created_at', '<', new Date(Date.now() - minAgeMs))
    .orderBy('created_at')
    .limit(100)
    .execute();

/**
 * Fails the snapshots left pending for good: older than `minAgeMs`, with no job that could still
 * take them (a job stalled twice is failed by BullMQ without running; an inline copy's process
 * died), and no copy under way (every copy holds the agent's turn). What a dead copy stored goes.
 */
async function failAbandoned(options: AgentSnapshotOptions, queues: QueueSet, minAgeMs: number): Promise<number> {
  const { db, store, log } = options;
  let abandoned = 0;
  for (const { id, agent_id } of await stalePending(db, minAgeMs)) {
    const job = await queues.get(QUEUES.lifecycle).getJob(snapshotJobId(id));
    if (job && ['waiting', 'delayed', 'active', 'prioritized'].includes(await job.getState())) continue;
    try {
      await options.exclusive(agent_id, async () => {
        const { numUpdatedRows } = await markFailed(db, id);
        if (!numUpdatedRows) return;
        await store.remove(id);
        abandoned++;
        log.warn({ agentId: agent_id, snapshotId: id }, 'failed a snapshot its copy abandoned');
      });
    } catch (error) {
      if (!isAgentBusy(error)) throw error; // a copy is under way: the next round looks again
    }
  }
  return abandoned;
}

/** Takes a snapshot of the agent now (the caller waits): before an operation that replaces its state, or to clone it. */
async function snapshotNow(
  options: AgentSnapshotOptions,
  agentId: string,
  reason: SnapshotReason,
  label: string | null = null,
): Promise<SnapshotRow> {
  return options.exclusive(agentId, async () => {
    const agent = await loadAgent(options.db, agentId);
    if (!agent) throw SnapshotErrors.notFound();
    const row = await recordSnapshot(options.db, agent, reason, label);
    await captureOrFail(options, agent, row);
    return { ...row, status: 'ready' as const };
  });
}

/**
 * The automatic snapshot before an operation that replaces the agent's state (update, repair,
 * reset): taken when there is state to keep (none for an agent that never ran, or on a remote
 * engine), and only the last AUTOMATIC_KEPT of that reason are kept. A failure stops the
 * operation: it would replace state nothing holds a copy of.
 */
async function beforeOperation(
  options: AgentSnapshotOptions,
  agentId: string,
  reason: 'before-update' | 'before-repair' | 'before-reset',
): Promise<string | null> {
  return options.exclusive(agentId, async () => {
    const agent = await loadAgent(options.db, agentId);
    if (!agent || !(await hasState(options.driver, agentId))) return null;
    const row = await recordSnapshot(options.db, agent, reason);
    await captureOrFail(options, agent, row);
    await keepNewest(options, agentId, reason, AUTOMATIC_KEPT);
    return row.id;
  });
}

/**
 * Keeps an uploaded archive as the `import` snapshot `row` of its agent: stored as it arrives
 * (at most `maxBytes`), then read back and checked whole (manifest, entries, every SHA-256)
 * before it is marked ready. Anything wrong removes it: 400 or 413, nothing kept.
 */
async function importArchive(
  { db, store }: Pick<AgentSnapshotOptions, 'db' | 'store'>,
  row: SnapshotRow,
  body: Readable,
  maxBytes: number,
): Promise<SnapshotRow> {
  let received = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _e, callback) {
      received += chunk.length;
      callback(received > maxBytes ? new SnapshotTooLargeError(maxBytes) : null, chunk);
    },
  });
  try {
    const stored = await store.put(row.id, body.pipe(bounded));
    const archive = await store.open(row.id);
    if (!archive) throw new SnapshotArchiveError('stored archive vanished');
    const manifest = await verifyAgentArchive(archive, { maxBytes: RESTORE_MAX_BYTES });
    return await db
      .updateTable('agent_snapshots')
      .set({
        status: 'ready',
        size_bytes: stored.sizeBytes,
        sha256: stored.sha256,
        openclaw_version: manifest.openclawVersion,
        label: row.label ?? manifest.label,
        completed_at: sql<Date>`now()`,
      })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    await store.remove(row.id);
    await db.deleteFrom('agent_snapshots').where('id', '=', row.id).execute();
    if (error instanceof SnapshotTooLargeError) throw SnapshotErrors.tooLarge(maxBytes);
    if (error instanceof SnapshotArchiveError) throw SnapshotErrors.badArchive(error.message);
    throw error;
  }
}

/**
 * Taking and restoring snapshots of agents' state, on the system connection (the worker's job, and
 * the restore route after the caller was found to own the agent). Each runs under the agent's
 * operation lock, so no start, stop or rebuild changes the container while its files are copied.
 */
export function agentSnapshots(options: AgentSnapshotOptions) {
  return {
    take: (snapshotId: string, lastAttempt: boolean) => take(options, snapshotId, lastAttempt),
    failAbandoned: (queues: QueueSet, minAgeMs: number) => failAbandoned(options, queues, minAgeMs),
    snapshotNow: (agentId: string, reason: SnapshotReason, label?: string | null) =>
      snapshotNow(options, agentId, reason, label),
    sweepScheduled: (queues: QueueSet, everyMs: number) => sweepScheduled(options.db, queues, everyMs),
    scheduled: (agentId: string) => takeScheduled(options, agentId),
    beforeOperation: (agentId: string, reason: 'before-update' | 'before-repair' | 'before-reset') =>
      beforeOperation(options, agentId, reason),
    importArchive: (row: SnapshotRow, body: Readable, maxBytes: number) => importArchive(options, row, body, maxBytes),
    clone: (snapshot: SnapshotRow, queues: QueueSet, create: (cloneId: string) => Promise<AgentRow>) =>
      clone(options, snapshot, queues, create),
    finishClones: (queues: QueueSet) => finishClones(options, queues),
    restore: (agentId: string, snapshotId: string) => restore(options, agentId, snapshotId),
    finishRestores: () => finishRestores(options),
  };
}

export type AgentSnapshots = ReturnType<typeof agentSnapshots>;
