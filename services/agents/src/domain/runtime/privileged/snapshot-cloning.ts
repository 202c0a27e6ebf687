import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import { unpackAgentState } from '@agentyard/runtime';
import { isAgentBusy, SnapshotErrors } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import { withChannelsOff } from '../../agents/config-document.ts';
import { OPERATION_LEASE_MS } from '../agent-operations.ts';
import { enqueueProvisioning, provisionJobId } from '../provisioning.ts';
import type { SnapshotRow } from '../snapshots.ts';
import { type AgentSnapshotOptions, RESTORE_MAX_BYTES, stateOf } from './snapshot-capture.ts';
import { loadAgent } from './lifecycle-status.ts';

const clearSeedingMark = (db: SystemDb, cloneId: string) =>
  db.updateTable('agents').set({ seeding_snapshot_id: null }).where('id', '=', cloneId).execute();

/**
 * Gives the clone `cloneId` (in its turn, marked seeding) the whole state of the snapshot it is
 * seeded from, from scratch (a seeding torn midway is wiped first) and that snapshot's
 * configuration, queues its provisioning, and only then clears the mark: a clone is either marked
 * or whole and on its way. False, nothing done, when the snapshot is no longer ready.
 */
async function seedClone(
  { db, driver, store }: Pick<AgentSnapshotOptions, 'db' | 'driver' | 'store'>,
  cloneId: string,
  snapshotId: string,
  queues: QueueSet,
): Promise<boolean> {
  const snapshot = await db
    .selectFrom('agent_snapshots')
    .select('id')
    .where('id', '=', snapshotId)
    .where('status', '=', 'ready')
    .executeTakeFirst();
  const archive = snapshot && (await store.open(snapshot.id));
  if (!archive) return false;
  const state = stateOf(driver, cloneId);
  await rm(state.path, { recursive: true, force: true });
  const manifest = await unpackAgentState(archive, state.path, {
    maxBytes: RESTORE_MAX_BYTES,
    ownerUid: state.ownerUid,
  });
  await db
    .updateTable('agents')
    // Its provisioning begins now: seeded again by the reconciler, that may be long after the row was made.
    .set({
      config: withChannelsOff(manifest.config),
      provisioning_since: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', cloneId)
    .execute();
  await enqueueProvisioning(queues, cloneId);
  await clearSeedingMark(db, cloneId);
  return true;
}

/**
 * Clones from the ready `snapshot`: `create` records the new agent (id given, marked seeding
 * `snapshot`) in the clone's own turn, taken before its row exists, so no reconciler touches a
 * seeding that is alive. Its state and configuration come from the snapshot, then its
 * provisioning is queued. Anything failing removes the clone whole; a process that dies midway
 * leaves it to `finishClones`.
 */
export async function clone(
  options: AgentSnapshotOptions,
  snapshot: SnapshotRow,
  queues: QueueSet,
  create: (cloneId: string) => Promise<AgentRow>,
): Promise<AgentRow> {
  const cloneId = randomUUID();
  let created = false;
  try {
    return await options.exclusive(cloneId, async () => {
      const clone = await create(cloneId);
      created = true;
      if (!(await seedClone(options, clone.id, snapshot.id, queues))) throw SnapshotErrors.notReady();
      return (await loadAgent(options.db, clone.id))!;
    });
  } catch (error) {
    if (created) await options.remove(cloneId);
    throw error;
  }
}

/**
 * The reconciler's part: settles the clones whose process died while seeding them (a live
 * seeding holds the clone's turn). One whose provisioning was queued is whole: only its mark is
 * cleared. Otherwise it is seeded again from scratch and its provisioning queued; if its
 * snapshot is gone meanwhile (or the seeding fails), the clone is removed (row, state, its plan slot with them).
 */
export async function finishClones(
  options: AgentSnapshotOptions,
  queues: QueueSet,
): Promise<{ finished: string[]; removed: string[] }> {
  const { db, log } = options;
  // Marked for less than a lease: its seeding may hold its turn in a process whose turns this one
  // cannot see (another platform or test run on the same database); a dead process's turn lapses in one anyway.
  const marked = await db
    .selectFrom('agents')
    .select('id')
    .where('seeding_snapshot_id', 'is not', null)
    .where('created_at', '<', sql<Date>`now() - ${OPERATION_LEASE_MS} * interval '1 millisecond'`)
    .orderBy('created_at')
    .limit(100)
    .execute();
  const outcome = { finished: [] as string[], removed: [] as string[] };
  for (const { id } of marked) {
    let abandoned = false;
    try {
      const settled = await options.exclusive(id, () => settleClone(options, id, queues));
      if (settled === 'finished') outcome.finished.push(id);
      abandoned = settled === 'abandoned';
    } catch (error) {
      if (!isAgentBusy(error)) throw error; // a seeding is under way: the next round looks again
    }
    // Out of the clone's turn: removing takes it.
    if (!abandoned) continue;
    // A removal that fails (the engine away) leaves the mark: the next round tries again, and this one goes on.
    try {
      await options.remove(id);
      outcome.removed.push(id);
    } catch (error) {
      log.warn({ agentId: id, err: { message: (error as Error).message } }, 'could not remove an abandoned clone');
    }
  }
  return outcome;
}

/**
 * One clone its process left marked, in its turn: its mark cleared (whole already), or seeded again
 * (`finished`), or `abandoned` (to be removed); undefined when nothing was left to settle.
 */
async function settleClone(
  options: AgentSnapshotOptions,
  id: string,
  queues: QueueSet,
): Promise<'cleared' | 'finished' | 'abandoned' | undefined> {
  const { db, log } = options;
  const agent = await loadAgent(db, id);
  if (!agent?.seeding_snapshot_id) return undefined;
  const queued = (await queues.get(QUEUES.provisioning).getJobState(provisionJobId(id))) !== 'unknown';
  if (queued || agent.status !== 'provisioning') {
    await clearSeedingMark(db, id);
    return 'cleared';
  }
  let abandoned: boolean;
  try {
    abandoned = !(await seedClone(options, id, agent.seeding_snapshot_id, queues));
  } catch (error) {
    log.warn({ agentId: id, err: { message: (error as Error).message } }, 'could not seed a clone again');
    abandoned = true;
  }
  log.warn(
    { agentId: id, snapshotId: agent.seeding_snapshot_id, finished: !abandoned },
    'settled a clone its process abandoned while seeding it',
  );
  return abandoned ? 'abandoned' : 'finished';
}
