import { stat } from 'node:fs/promises';
import { openAgentSecret } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import { sql, type SnapshotReason } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { packAgentState, SNAPSHOT_FORMAT, type RuntimeDriver, type SnapshotManifest } from '@agentyard/runtime';
import { SnapshotErrors } from '../../../errors.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import { channelBindings, openedChannels } from '../../gateway/channel-vault.ts';
import { isObject } from '../../agents/config-document.ts';
import type { ExclusiveOperation } from '../agent-operations.ts';
import type { SnapshotStore } from '../snapshot-store.ts';
import type { SnapshotRow } from '../snapshots.ts';

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
export const RESTORE_MAX_BYTES = 32 * 1024 ** 3;

/** The longest a snapshot's copy may take (the agent paused all along, if it runs). */
const CAPTURE_MAX_MS = 120_000;

/** The agent's state directory on this engine; 501 where the engine keeps none (a remote one). */
export const stateOf = (driver: RuntimeDriver, agentId: string) => {
  const state = driver.stateDirectory?.(agentId);
  if (!state) throw SnapshotErrors.unsupported();
  return state;
};

/** Whether the agent has state to keep: none for an agent that never ran, or on a remote engine. */
export const hasState = async (driver: RuntimeDriver, agentId: string) => {
  const state = driver.stateDirectory?.(agentId);
  return (
    !!state &&
    (await stat(state.path).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  );
};

/** Skills and channels a configuration names, for the manifest (names only: no secret is in the config). */
function namesUnder(config: Record<string, unknown>, key: string, inner?: string): string[] {
  const node = config[key];
  const entries = inner && isObject(node) ? node[inner] : node;
  return isObject(entries) ? Object.keys(entries).sort() : [];
}

/** The agent's own secrets, each replaced wherever it shows up in the state (the agent may have written one down). */
const secretsOf = async (db: SystemDb, keyring: Keyring, agent: AgentRow) =>
  [
    agent.gateway_token_sealed ? openAgentSecret(keyring, agent.id, 'gateway-token', agent.gateway_token_sealed) : null,
    agent.hooks_token_sealed ? openAgentSecret(keyring, agent.id, 'hooks-token', agent.hooks_token_sealed) : null,
    // Channel credentials live under credentials/ (left out), but the agent may have copied one elsewhere.
    ...(await openedChannels(db, keyring, agent.id)).flatMap((c) => Object.values(c.credentials)),
  ].filter((s): s is string => s !== null);

/**
 * Copies the agent's state into the store as `row`'s archive and marks it ready. A running
 * container is paused (cgroup freezer) for the copy and resumed after, so no SQLite file is read
 * half-written; a stopped one is copied as it is. Returns how long the agent was paused.
 */
export async function capture(
  { db, driver, keyring, store, log }: AgentSnapshotOptions,
  agent: AgentRow,
  row: SnapshotRow,
): Promise<{ pausedMs: number }> {
  const state = stateOf(driver, agent.id);
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
  const archive = packAgentState({ stateDir: state.path, manifest, secrets: await secretsOf(db, keyring, agent) });
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

/** A pending snapshot marked failed (a row no longer pending is left as it is). */
export const markFailed = (db: SystemDb, snapshotId: string) =>
  db
    .updateTable('agent_snapshots')
    .set({ status: 'failed', completed_at: sql<Date>`now()` })
    .where('id', '=', snapshotId)
    .where('status', '=', 'pending')
    .executeTakeFirst();

/** `capture`, the snapshot marked failed when it cannot be taken (the error goes on to the caller). */
export async function captureOrFail(options: AgentSnapshotOptions, agent: AgentRow, row: SnapshotRow): Promise<void> {
  try {
    await capture(options, agent, row);
  } catch (error) {
    await markFailed(options.db, row.id);
    throw error;
  }
}

/** The agent's snapshots of `reason` older than its newest `kept` (their ids and sizes). */
export const beyondNewest = (db: SystemDb, agentId: string, reason: SnapshotReason, kept: number) =>
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

/** Deletes the agent's snapshots of `reason` beyond its newest `kept`, rows and archives. */
export async function keepNewest(
  { db, store }: Pick<AgentSnapshotOptions, 'db' | 'store'>,
  agentId: string,
  reason: SnapshotReason,
  kept: number,
): Promise<void> {
  for (const { id } of await beyondNewest(db, agentId, reason, kept)) {
    await db.deleteFrom('agent_snapshots').where('id', '=', id).execute();
    await store.remove(id);
  }
}
