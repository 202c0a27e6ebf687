import { randomBytes } from 'node:crypto';
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { isLeftOutOfSnapshots, RESTORE_STAGING_PREFIX, unpackAgentState, type RuntimeDriver } from '@agentyard/runtime';
import { isAgentBusy, SnapshotErrors } from '../../../errors.ts';
import { readySnapshot, recordSnapshot } from '../snapshots.ts';
import { type AgentSnapshotOptions, capture, markFailed, RESTORE_MAX_BYTES, stateOf } from './snapshot-capture.ts';
import { loadAgent } from './lifecycle-status.ts';

/** An agent with no restore under way. */
const NOT_RESTORING = { restoring_snapshot_id: null, restoring_before_snapshot_id: null };

const markRestoring = (
  db: SystemDb,
  agentId: string,
  restoring: { restoring_snapshot_id: string | null; restoring_before_snapshot_id: string | null },
) => db.updateTable('agents').set(restoring).where('id', '=', agentId).execute();

/** What restores left unpacked beside the agent's state (one killed midway; never the state itself). */
async function removeStaging(driver: RuntimeDriver, agentId: string): Promise<void> {
  const state = stateOf(driver, agentId);
  const names = await readdir(state.path).catch(() => [] as string[]);
  for (const name of names)
    if (name.startsWith(RESTORE_STAGING_PREFIX)) await rm(join(state.path, name), { recursive: true, force: true });
}

/**
 * Makes the agent's state and applied configuration those of the ready snapshot `snapshotId`,
 * whatever the state holds now (a restore torn midway too): unpacked on the agent's own disk
 * first, then moved into place part by part (same filesystem). Done again, it gives the same.
 */
async function replaceState(
  { db, driver, store }: Pick<AgentSnapshotOptions, 'db' | 'driver' | 'store'>,
  agentId: string,
  snapshotId: string,
): Promise<void> {
  const state = stateOf(driver, agentId);
  await removeStaging(driver, agentId);
  const archive = await store.open(snapshotId);
  if (!archive) throw SnapshotErrors.notReady();
  const staging = join(state.path, `${RESTORE_STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
  try {
    const manifest = await unpackAgentState(archive, staging, {
      maxBytes: RESTORE_MAX_BYTES,
      ownerUid: state.ownerUid,
    });
    for (const name of await readdir(state.path))
      if (!isLeftOutOfSnapshots(name)) await rm(join(state.path, name), { recursive: true, force: true });
    for (const name of await readdir(staging)) await rename(join(staging, name), join(state.path, name));
    await db
      .updateTable('agents')
      .set({ config: manifest.config, updated_at: sql<Date>`now()` })
      .where('id', '=', agentId)
      .execute();
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Brings the agent back to a ready snapshot of its own: stops its container, takes a
 * `before-restore` snapshot of the state it had, replaces the state (keeping what snapshots
 * never hold: its device identity, channel credentials, config file) and its applied
 * configuration, and rebuilds a running agent on them. The restore is recorded on the agent
 * before its state is touched and cleared once it is up again, so a process that dies midway
 * leaves it to `finishRestores`. Returns the before-restore snapshot and whether the agent ran
 * (a stopped one gets its configuration from the caller, by a lifecycle job).
 */
export async function restore(
  options: AgentSnapshotOptions,
  agentId: string,
  snapshotId: string,
): Promise<{ beforeRestoreSnapshotId: string; wasRunning: boolean }> {
  const { db, driver, log } = options;
  return options.exclusive(agentId, async () => {
    const agent = await loadAgent(db, agentId);
    if (!agent) throw SnapshotErrors.notFound();
    const target = await readySnapshot(db, agentId, snapshotId);
    const container = agent.container_id ? await driver.inspect(agent.container_id) : null;
    const wasRunning = container?.state === 'running';
    const before = await recordSnapshot(db, agent, 'before-restore');
    await markRestoring(db, agentId, { restoring_snapshot_id: target.id, restoring_before_snapshot_id: before.id });
    if (container && wasRunning) await driver.stop(container.id);
    try {
      await capture(options, agent, before);
    } catch (error) {
      await markFailed(db, before.id);
      await markRestoring(db, agentId, NOT_RESTORING);
      if (container && wasRunning) await driver.start(container.id);
      throw error;
    }
    await replaceState(options, agentId, target.id);
    try {
      if (wasRunning) await options.rebuild(agentId);
    } finally {
      await markRestoring(db, agentId, NOT_RESTORING);
    }
    log.info?.({ agentId, snapshotId, beforeRestoreSnapshotId: before.id }, 'agent restored from a snapshot');
    return { beforeRestoreSnapshotId: before.id, wasRunning };
  });
}

type RestoreOutcome = { finished: string[]; rolledBack: string[]; toApply: string[] };

/**
 * The reconciler's part: finishes the restores whose process died (a live one holds the
 * agent's turn). Once the before-restore snapshot is ready the state may be torn, so it is
 * replaced whole again: by the restored snapshot, or by the before-restore one if that is gone
 * (rolled back); before it, the state was not touched, so the restore is only undone (its
 * snapshot failed, what was unpacked removed). Either way an agent that should run is rebuilt.
 * Returns the agents whose state changed and that do not run: they need their configuration applied.
 */
export async function finishRestores(options: AgentSnapshotOptions): Promise<RestoreOutcome> {
  const marked = await options.db
    .selectFrom('agents')
    .select('id')
    .where('restoring_snapshot_id', 'is not', null)
    .orderBy('updated_at')
    .limit(100)
    .execute();
  const outcome: RestoreOutcome = { finished: [], rolledBack: [], toApply: [] };
  for (const { id } of marked) {
    try {
      await options.exclusive(id, () => finishRestore(options, id, outcome));
    } catch (error) {
      if (!isAgentBusy(error)) throw error; // a restore is under way: the next round looks again
    }
  }
  return outcome;
}

/** One abandoned restore finished or rolled back, in the agent's turn; `outcome` says which. */
async function finishRestore(options: AgentSnapshotOptions, id: string, outcome: RestoreOutcome): Promise<void> {
  const { db, store, log } = options;
  const agent = await loadAgent(db, id);
  if (!agent?.restoring_snapshot_id) return;
  const shouldRun = ['running', 'active'].includes(agent.status);
  const ready = (snapshotId: string | null) =>
    snapshotId
      ? db
          .selectFrom('agent_snapshots')
          .select('id')
          .where('id', '=', snapshotId)
          .where('status', '=', 'ready')
          .executeTakeFirst()
      : undefined;
  const before = await ready(agent.restoring_before_snapshot_id);
  if (before) {
    const target = await ready(agent.restoring_snapshot_id);
    await replaceState(options, id, (target ?? before).id);
    (target ? outcome.finished : outcome.rolledBack).push(id);
    if (!shouldRun) outcome.toApply.push(id);
  } else {
    if (agent.restoring_before_snapshot_id) {
      await markFailed(db, agent.restoring_before_snapshot_id);
      await store.remove(agent.restoring_before_snapshot_id);
    }
    await removeStaging(options.driver, id);
    outcome.rolledBack.push(id);
  }
  try {
    if (shouldRun) await options.rebuild(id);
  } finally {
    await markRestoring(db, id, NOT_RESTORING);
  }
  log.warn(
    { agentId: id, snapshotId: agent.restoring_snapshot_id, finished: outcome.finished.includes(id) },
    'finished a restore its process abandoned',
  );
}
