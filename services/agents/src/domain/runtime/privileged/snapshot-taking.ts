import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { openAgentSecret } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import { sql, type SnapshotReason } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import {
  isLeftOutOfSnapshots,
  packAgentState,
  RESTORE_STAGING_PREFIX,
  SNAPSHOT_FORMAT,
  SnapshotArchiveError,
  type RuntimeDriver,
  type SnapshotManifest,
  SnapshotTooLargeError,
  unpackAgentState,
  verifyAgentArchive,
} from '@agentyard/runtime';
import { isAgentBusy, SnapshotErrors } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import { channelBindings, openedChannels } from '../../gateway/channel-vault.ts';
import { isObject, withChannelsOff } from '../../agents/config-document.ts';
import { OPERATION_LEASE_MS, type ExclusiveOperation } from '../agent-operations.ts';
import type { SnapshotStore } from '../snapshot-store.ts';
import { PLANS, snapshotLimitsOf } from '@agentyard/proto-schemas';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import { enqueueProvisioning, provisionJobId } from '../provisioning.ts';
import {
  readySnapshot,
  recordSnapshot,
  SCHEDULED_SNAPSHOT_JOB,
  scheduledSnapshotJobId,
  snapshotBytesOf,
  snapshotJobId,
  type ScheduledSnapshotJob,
  type SnapshotRow,
} from '../snapshots.ts';

export interface AgentSnapshotOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  keyring: Keyring;
  store: SnapshotStore;
  exclusive: ExclusiveOperation;
  /** Rebuilds the agent's container from its stored configuration, running, in the caller's turn (the runtime's `rebuild`). */
  rebuild: (agentId: string) => Promise<void>;
  /** Removes an agent whole: containers, state, row (the runtime's `remove`; it takes the agent's turn). */
  remove: (agentId: string) => Promise<unknown>;
  log: { info?(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** The unpacked size a restore accepts: a state disk is at most the largest plan's memory (docs/agent-runtime.md). */
const RESTORE_MAX_BYTES = 32 * 1024 ** 3;

/** The longest a snapshot's copy may take (the agent paused all along, if it runs). */
const CAPTURE_MAX_MS = 120_000;

/** Automatic snapshots of each reason kept per agent (the newest); older ones are deleted as a new one is taken. */
const AUTOMATIC_KEPT = 3;

/** An agent with no restore under way. */
const NOT_RESTORING = { restoring_snapshot_id: null, restoring_before_snapshot_id: null };

/** Agents whose state a daily snapshot keeps: any that has a state disk and is not being made or failed. */
const SCHEDULED_STATUSES = ['running', 'active', 'suspended', 'stopped'] as const;

const isDirectory = (path: string) =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** Since when an agent's state cannot have changed (it has not run since), or null while it runs or may. */
const stillSince = (agent: AgentRow): Date | null => {
  if (agent.status === 'stopped') return new Date(agent.updated_at);
  if (agent.status === 'suspended' && agent.hibernation === 'stopped' && agent.suspended_at)
    return new Date(agent.suspended_at);
  return null;
};

/** Skills and channels a configuration names, for the manifest (names only: no secret is in the config). */
function namesUnder(config: Record<string, unknown>, key: string, inner?: string): string[] {
  const node = config[key];
  const entries = inner && isObject(node) ? node[inner] : node;
  return isObject(entries) ? Object.keys(entries).sort() : [];
}

/**
 * Taking and restoring snapshots of agents' state, on the system connection (the worker's job, and
 * the restore route after the caller was found to own the agent). Each runs under the agent's
 * operation lock, so no start, stop or rebuild changes the container while its files are copied.
 */
export function agentSnapshots(options: AgentSnapshotOptions) {
  const { db, driver, keyring, store, exclusive, rebuild, remove, log } = options;

  const loadAgent = (id: string) => db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  const stateOf = (agentId: string) => {
    const state = driver.stateDirectory?.(agentId);
    if (!state) throw SnapshotErrors.unsupported();
    return state;
  };

  /** The agent's own secrets, each replaced wherever it shows up in the state (the agent may have written one down). */
  const secretsOf = async (agent: AgentRow) =>
    [
      agent.gateway_token_sealed
        ? openAgentSecret(keyring, agent.id, 'gateway-token', agent.gateway_token_sealed)
        : null,
      agent.hooks_token_sealed ? openAgentSecret(keyring, agent.id, 'hooks-token', agent.hooks_token_sealed) : null,
      // Channel credentials live under credentials/ (left out), but the agent may have copied one elsewhere.
      ...(await openedChannels(db, keyring, agent.id)).flatMap((c) => Object.values(c.credentials)),
    ].filter((s): s is string => s !== null);

  /**
   * Copies the agent's state into the store as `row`'s archive and marks it ready. A running
   * container is paused (cgroup freezer) for the copy and resumed after, so no SQLite file is read
   * half-written; a stopped one is copied as it is. Returns how long the agent was paused.
   */
  async function capture(agent: AgentRow, row: SnapshotRow): Promise<{ pausedMs: number }> {
    const state = stateOf(agent.id);
    const container = agent.container_id ? await driver.inspect(agent.container_id) : null;
    const pause = container?.state === 'running' && driver.pause && driver.unpause;
    const manifest: SnapshotManifest = {
      format: SNAPSHOT_FORMAT,
      agentId: agent.id,
      openclawVersion: agent.runtime_version,
      createdAt: new Date(row.created_at).toISOString(),
      reason: row.reason,
      label: row.label,
      config: agent.config,
      skills: namesUnder(agent.config, 'skills', 'entries'),
      // Bound in the vault (names only); a restore binds them again from there, a clone starts without.
      channels: (await channelBindings(db, agent.id)).map((c) => c.channel),
    };
    let pausedAt: number | null = null;
    let pausedMs = 0;
    if (pause) {
      await driver.pause!(container.id);
      pausedAt = performance.now();
    }
    let stored: { sizeBytes: number; sha256: string };
    const archive = packAgentState({ stateDir: state.path, manifest, secrets: await secretsOf(agent) });
    // A copy that stalls must not leave the agent frozen: past the bound it is abandoned and the agent resumed.
    const bound = setTimeout(
      () => archive.destroy(new Error(`snapshot copy took longer than ${CAPTURE_MAX_MS} ms`)),
      CAPTURE_MAX_MS,
    );
    try {
      stored = await store.put(row.id, archive);
    } finally {
      clearTimeout(bound);
      if (pausedAt !== null) {
        await driver.unpause!(container!.id);
        pausedMs = performance.now() - pausedAt;
      }
    }
    await db
      .updateTable('agent_snapshots')
      .set({
        status: 'ready',
        size_bytes: stored.sizeBytes,
        sha256: stored.sha256,
        openclaw_version: agent.runtime_version,
        completed_at: sql<Date>`now()`,
      })
      .where('id', '=', row.id)
      .execute();
    log.info?.(
      { agentId: agent.id, snapshotId: row.id, sizeBytes: stored.sizeBytes, pausedMs: Math.round(pausedMs) },
      'agent snapshot taken',
    );
    return { pausedMs };
  }

  /** The agent's snapshots of `reason` older than its newest `kept` (their ids and sizes). */
  const beyondNewest = (agentId: string, reason: SnapshotReason, kept: number) =>
    db
      .selectFrom('agent_snapshots')
      .select(['id', 'size_bytes'])
      .where('agent_id', '=', agentId)
      .where('reason', '=', reason)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(kept)
      .limit(1000)
      .execute();
  const prune = async (snapshots: { id: string }[]) => {
    for (const { id } of snapshots) {
      await db.deleteFrom('agent_snapshots').where('id', '=', id).execute();
      await store.remove(id);
    }
  };

  const markRestoring = (
    agentId: string,
    restoring: { restoring_snapshot_id: string | null; restoring_before_snapshot_id: string | null },
  ) => db.updateTable('agents').set(restoring).where('id', '=', agentId).execute();

  /** What restores left unpacked beside the agent's state (one killed midway; never the state itself). */
  const removeStaging = async (agentId: string) => {
    const state = stateOf(agentId);
    const names = await readdir(state.path).catch(() => [] as string[]);
    for (const name of names)
      if (name.startsWith(RESTORE_STAGING_PREFIX)) await rm(join(state.path, name), { recursive: true, force: true });
  };

  /**
   * Makes the agent's state and applied configuration those of the ready snapshot `snapshotId`,
   * whatever the state holds now (a restore torn midway too): unpacked on the agent's own disk
   * first, then moved into place part by part (same filesystem). Done again, it gives the same.
   */
  async function replaceState(agentId: string, snapshotId: string): Promise<void> {
    const state = stateOf(agentId);
    await removeStaging(agentId);
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
   * Gives the clone `cloneId` (in its turn, marked seeding) the whole state of the snapshot it is
   * seeded from, from scratch (a seeding torn midway is wiped first) and that snapshot's
   * configuration, queues its provisioning, and only then clears the mark: a clone is either marked
   * or whole and on its way. False, nothing done, when the snapshot is no longer ready.
   */
  async function seedClone(cloneId: string, snapshotId: string, queues: QueueSet): Promise<boolean> {
    const snapshot = await db
      .selectFrom('agent_snapshots')
      .select('id')
      .where('id', '=', snapshotId)
      .where('status', '=', 'ready')
      .executeTakeFirst();
    const archive = snapshot && (await store.open(snapshot.id));
    if (!archive) return false;
    const state = stateOf(cloneId);
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
    await db.updateTable('agents').set({ seeding_snapshot_id: null }).where('id', '=', cloneId).execute();
    return true;
  }

  const failed = (snapshotId: string) =>
    db
      .updateTable('agent_snapshots')
      .set({ status: 'failed', completed_at: sql<Date>`now()` })
      .where('id', '=', snapshotId)
      .where('status', '=', 'pending')
      .executeTakeFirst();

  return {
    /**
     * The worker's job: takes the pending snapshot `snapshotId`. Idempotent: a snapshot already
     * taken, failed or deleted (or its agent) is left as it is. `lastAttempt` marks it failed on error.
     */
    async take(snapshotId: string, lastAttempt: boolean): Promise<string> {
      const row = await db.selectFrom('agent_snapshots').selectAll().where('id', '=', snapshotId).executeTakeFirst();
      if (!row) return 'deleted';
      if (row.status !== 'pending') return `skipped (${row.status})`;
      try {
        return await exclusive(row.agent_id, async () => {
          const agent = await loadAgent(row.agent_id);
          if (!agent) return 'agent deleted';
          // Nothing whole is stored for a pending snapshot: what is under its id, an attempt killed mid-copy left.
          await store.remove(row.id);
          const { pausedMs } = await capture(agent, row);
          return `taken (paused ${Math.round(pausedMs)} ms)`;
        });
      } catch (error) {
        if (lastAttempt || (error as { statusCode?: number }).statusCode === 501) {
          await failed(snapshotId);
          await store.remove(snapshotId);
          return `failed: ${(error as Error).message}`;
        }
        throw error;
      }
    },

    /**
     * Fails the snapshots left pending for good: older than `minAgeMs`, with no job that could still
     * take them (a job stalled twice is failed by BullMQ without running; an inline copy's process
     * died), and no copy under way (every copy holds the agent's turn). What a dead copy stored goes.
     */
    async failAbandoned(queues: QueueSet, minAgeMs: number): Promise<number> {
      const stale = await db
        .selectFrom('agent_snapshots')
        .select(['id', 'agent_id'])
        .where('status', '=', 'pending')
        .where('created_at', '<', new Date(Date.now() - minAgeMs))
        .orderBy('created_at')
        .limit(100)
        .execute();
      let abandoned = 0;
      for (const { id, agent_id } of stale) {
        const job = await queues.get(QUEUES.lifecycle).getJob(snapshotJobId(id));
        if (job && ['waiting', 'delayed', 'active', 'prioritized'].includes(await job.getState())) continue;
        try {
          await exclusive(agent_id, async () => {
            const { numUpdatedRows } = await failed(id);
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
    },

    /** Takes a snapshot of the agent now (the caller waits): before an operation that replaces its state, or to clone it. */
    async snapshotNow(agentId: string, reason: SnapshotReason, label: string | null = null): Promise<SnapshotRow> {
      return exclusive(agentId, async () => {
        const agent = await loadAgent(agentId);
        if (!agent) throw SnapshotErrors.notFound();
        const row = await recordSnapshot(db, agent, reason, label);
        try {
          await capture(agent, row);
        } catch (error) {
          await failed(row.id);
          throw error;
        }
        return { ...row, status: 'ready' as const };
      });
    },

    /**
     * Enqueues the daily snapshot of every agent with state whose plan keeps scheduled snapshots and
     * that has none newer than a period (`everyMs`); one job per agent and period (its id).
     */
    async sweepScheduled(queues: QueueSet, everyMs: number): Promise<string> {
      const keeping = PLANS.filter((plan) => snapshotLimitsOf(plan).scheduledKept > 0);
      const since = new Date(Date.now() - everyMs);
      const due = await db
        .selectFrom('agents')
        .select('id')
        .where('status', 'in', [...SCHEDULED_STATUSES])
        .where('plan', 'in', keeping)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('agent_snapshots as s')
                .select('s.id')
                .whereRef('s.agent_id', '=', 'agents.id')
                .where('s.reason', '=', 'scheduled')
                .where('s.status', '<>', 'failed')
                .where('s.created_at', '>', since),
            ),
          ),
        )
        .execute();
      for (const { id } of due) {
        await queues.add(QUEUES.lifecycle, SCHEDULED_SNAPSHOT_JOB, { agentId: id } satisfies ScheduledSnapshotJob, {
          jobId: scheduledSnapshotJobId(id, everyMs),
          attempts: 3,
          backoff: { type: 'exponential', delay: 5000 },
          // Kept for two periods: the id stops a second job for the same period.
          removeOnComplete: { age: Math.ceil((2 * everyMs) / 1000) },
          removeOnFail: { age: Math.ceil((2 * everyMs) / 1000) },
        });
      }
      return `${due.length} due`;
    },

    /**
     * An agent's daily snapshot (the sweep's job): taken unless its plan keeps none, its state cannot
     * have changed since its newest ready snapshot (it has not run since), or the owner's snapshots
     * would still fill the plan's quota once this agent's oldest scheduled ones beyond the plan's
     * number are gone. After it, only the plan's newest scheduled snapshots of the agent are kept.
     */
    async scheduled(agentId: string): Promise<string> {
      return exclusive(agentId, async () => {
        const agent = await loadAgent(agentId);
        if (!agent || !(SCHEDULED_STATUSES as readonly string[]).includes(agent.status))
          return 'skipped: no agent with state';
        const state = driver.stateDirectory?.(agentId);
        if (!state || !(await isDirectory(state.path))) return 'skipped: no state yet';
        const { scheduledKept, quotaBytes } = snapshotLimitsOf(agent.plan);
        if (scheduledKept === 0) return 'skipped: the plan keeps no scheduled snapshots';
        const still = stillSince(agent);
        if (still) {
          const newer = await db
            .selectFrom('agent_snapshots')
            .select('id')
            .where('agent_id', '=', agentId)
            .where('status', '=', 'ready')
            .where('created_at', '>=', still)
            .executeTakeFirst();
          if (newer) return `skipped: unchanged since snapshot ${newer.id}`;
        }
        const leaving = await beyondNewest(agentId, 'scheduled', scheduledKept - 1);
        const used =
          (await snapshotBytesOf(db, agent.user_id)) - leaving.reduce((sum, s) => sum + Number(s.size_bytes ?? 0), 0);
        if (used >= quotaBytes) {
          log.warn(
            { agentId, usedBytes: used, quotaBytes },
            'scheduled snapshot skipped: the owner is at the snapshot quota',
          );
          return 'skipped: quota reached';
        }
        const row = await recordSnapshot(db, agent, 'scheduled');
        try {
          await capture(agent, row);
        } catch (error) {
          await failed(row.id);
          throw error;
        }
        await prune(await beyondNewest(agentId, 'scheduled', scheduledKept));
        return `taken ${row.id}`;
      });
    },

    /**
     * The automatic snapshot before an operation that replaces the agent's state (update, repair,
     * reset): taken when there is state to keep (none for an agent that never ran, or on a remote
     * engine), and only the last AUTOMATIC_KEPT of that reason are kept. A failure stops the
     * operation: it would replace state nothing holds a copy of.
     */
    async beforeOperation(
      agentId: string,
      reason: 'before-update' | 'before-repair' | 'before-reset',
    ): Promise<string | null> {
      return exclusive(agentId, async () => {
        const agent = await loadAgent(agentId);
        const state = driver.stateDirectory?.(agentId);
        if (!agent || !state || !(await isDirectory(state.path))) return null;
        const row = await recordSnapshot(db, agent, reason);
        try {
          await capture(agent, row);
        } catch (error) {
          await failed(row.id);
          throw error;
        }
        await prune(await beyondNewest(agentId, reason, AUTOMATIC_KEPT));
        return row.id;
      });
    },

    /**
     * Keeps an uploaded archive as the `import` snapshot `row` of its agent: stored as it arrives
     * (at most `maxBytes`), then read back and checked whole (manifest, entries, every SHA-256)
     * before it is marked ready. Anything wrong removes it: 400 or 413, nothing kept.
     */
    async importArchive(row: SnapshotRow, body: Readable, maxBytes: number): Promise<SnapshotRow> {
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
    },

    /**
     * Clones from the ready `snapshot`: `create` records the new agent (id given, marked seeding
     * `snapshot`) in the clone's own turn, taken before its row exists, so no reconciler touches a
     * seeding that is alive. Its state and configuration come from the snapshot, then its
     * provisioning is queued. Anything failing removes the clone whole; a process that dies midway
     * leaves it to `finishClones`.
     */
    async clone(
      snapshot: SnapshotRow,
      queues: QueueSet,
      create: (cloneId: string) => Promise<AgentRow>,
    ): Promise<AgentRow> {
      const cloneId = randomUUID();
      let created = false;
      try {
        return await exclusive(cloneId, async () => {
          const clone = await create(cloneId);
          created = true;
          if (!(await seedClone(clone.id, snapshot.id, queues))) throw SnapshotErrors.notReady();
          return (await loadAgent(clone.id))!;
        });
      } catch (error) {
        if (created) await remove(cloneId);
        throw error;
      }
    },

    /**
     * The reconciler's part: settles the clones whose process died while seeding them (a live
     * seeding holds the clone's turn). One whose provisioning was queued is whole: only its mark is
     * cleared. Otherwise it is seeded again from scratch and its provisioning queued; if its
     * snapshot is gone meanwhile (or the seeding fails), the clone is removed (row, state, its plan slot with them).
     */
    async finishClones(queues: QueueSet): Promise<{ finished: string[]; removed: string[] }> {
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
          await exclusive(id, async () => {
            const agent = await loadAgent(id);
            if (!agent?.seeding_snapshot_id) return;
            const queued = (await queues.get(QUEUES.provisioning).getJobState(provisionJobId(id))) !== 'unknown';
            if (queued || agent.status !== 'provisioning') {
              await db.updateTable('agents').set({ seeding_snapshot_id: null }).where('id', '=', id).execute();
              return;
            }
            try {
              abandoned = !(await seedClone(id, agent.seeding_snapshot_id, queues));
            } catch (error) {
              log.warn({ agentId: id, err: { message: (error as Error).message } }, 'could not seed a clone again');
              abandoned = true;
            }
            if (!abandoned) outcome.finished.push(id);
            log.warn(
              { agentId: id, snapshotId: agent.seeding_snapshot_id, finished: !abandoned },
              'settled a clone its process abandoned while seeding it',
            );
          });
        } catch (error) {
          if (!isAgentBusy(error)) throw error; // a seeding is under way: the next round looks again
        }
        // Out of the clone's turn: removing takes it.
        if (!abandoned) continue;
        // A removal that fails (the engine away) leaves the mark: the next round tries again, and this one goes on.
        try {
          await remove(id);
          outcome.removed.push(id);
        } catch (error) {
          log.warn({ agentId: id, err: { message: (error as Error).message } }, 'could not remove an abandoned clone');
        }
      }
      return outcome;
    },

    /**
     * Brings the agent back to a ready snapshot of its own: stops its container, takes a
     * `before-restore` snapshot of the state it had, replaces the state (keeping what snapshots
     * never hold: its device identity, channel credentials, config file) and its applied
     * configuration, and rebuilds a running agent on them. The restore is recorded on the agent
     * before its state is touched and cleared once it is up again, so a process that dies midway
     * leaves it to `finishRestores`. Returns the before-restore snapshot and whether the agent ran
     * (a stopped one gets its configuration from the caller, by a lifecycle job).
     */
    async restore(
      agentId: string,
      snapshotId: string,
    ): Promise<{ beforeRestoreSnapshotId: string; wasRunning: boolean }> {
      return exclusive(agentId, async () => {
        const agent = await loadAgent(agentId);
        if (!agent) throw SnapshotErrors.notFound();
        const target = await readySnapshot(db, agentId, snapshotId);
        const container = agent.container_id ? await driver.inspect(agent.container_id) : null;
        const wasRunning = container?.state === 'running';
        const before = await recordSnapshot(db, agent, 'before-restore');
        await markRestoring(agentId, { restoring_snapshot_id: target.id, restoring_before_snapshot_id: before.id });
        if (container && wasRunning) await driver.stop(container.id);
        try {
          await capture(agent, before);
        } catch (error) {
          await failed(before.id);
          await markRestoring(agentId, NOT_RESTORING);
          if (container && wasRunning) await driver.start(container.id);
          throw error;
        }
        await replaceState(agentId, target.id);
        try {
          if (wasRunning) await rebuild(agentId);
        } finally {
          await markRestoring(agentId, NOT_RESTORING);
        }
        log.info?.({ agentId, snapshotId, beforeRestoreSnapshotId: before.id }, 'agent restored from a snapshot');
        return { beforeRestoreSnapshotId: before.id, wasRunning };
      });
    },

    /**
     * The reconciler's part: finishes the restores whose process died (a live one holds the
     * agent's turn). Once the before-restore snapshot is ready the state may be torn, so it is
     * replaced whole again: by the restored snapshot, or by the before-restore one if that is gone
     * (rolled back); before it, the state was not touched, so the restore is only undone (its
     * snapshot failed, what was unpacked removed). Either way an agent that should run is rebuilt.
     * Returns the agents whose state changed and that do not run: they need their configuration applied.
     */
    async finishRestores(): Promise<{ finished: string[]; rolledBack: string[]; toApply: string[] }> {
      const marked = await db
        .selectFrom('agents')
        .select('id')
        .where('restoring_snapshot_id', 'is not', null)
        .orderBy('updated_at')
        .limit(100)
        .execute();
      const outcome = { finished: [] as string[], rolledBack: [] as string[], toApply: [] as string[] };
      for (const { id } of marked) {
        try {
          await exclusive(id, async () => {
            const agent = await loadAgent(id);
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
              await replaceState(id, (target ?? before).id);
              (target ? outcome.finished : outcome.rolledBack).push(id);
              if (!shouldRun) outcome.toApply.push(id);
            } else {
              if (agent.restoring_before_snapshot_id) {
                await failed(agent.restoring_before_snapshot_id);
                await store.remove(agent.restoring_before_snapshot_id);
              }
              await removeStaging(id);
              outcome.rolledBack.push(id);
            }
            try {
              if (shouldRun) await rebuild(id);
            } finally {
              await markRestoring(id, NOT_RESTORING);
            }
            log.warn(
              { agentId: id, snapshotId: agent.restoring_snapshot_id, finished: outcome.finished.includes(id) },
              'finished a restore its process abandoned',
            );
          });
        } catch (error) {
          if (!isAgentBusy(error)) throw error; // a restore is under way: the next round looks again
        }
      }
      return outcome;
    },
  };
}

export type AgentSnapshots = ReturnType<typeof agentSnapshots>;
