import { join } from 'node:path';
import { adminEmailSet, adminNeedsVerifiedEmail, repoRoot } from '@agentyard/config';
import { parseKeyring } from '@agentyard/crypto';
import { activeStatusesOf } from '@agentyard/db';
import { createSystemDb, type SystemDb } from '@agentyard/db/system';
import type { Log } from '@agentyard/http';
import { isAdminEmail } from '@agentyard/identity';
import { type AgentActivity, agentActivity, redisConnection } from '@agentyard/queue';
import { createRuntimeDriver, warmClasses } from '@agentyard/runtime';
import type { AgentsConfig } from '../../../config.ts';
import { workspaceAdmission } from '../workspace-admission.ts';
import { agentOperations } from '../agent-operations.ts';
import { type AgentRuntime, type AgentRuntimeOptions, createAgentRuntime } from './agent-runtime.ts';
import { agentAllowance } from '../../agents/privileged/plan-allowance.ts';
import { directorySnapshotStore, type SnapshotStore } from '../snapshot-store.ts';
import { s3SnapshotStore } from '../s3-snapshot-store.ts';
import { listSnapshots } from '../snapshots.ts';
import { type AgentSnapshots, agentSnapshots } from './snapshot-taking.ts';
import { agentHibernation } from './hibernation.ts';
import type { AgentHibernationOptions } from './hibernation-context.ts';
import { parseHibernationPlans } from '../hibernation-policy.ts';

/** The docker driver's host directory for agents' config and state ('' when copied through the engine API). */
export function runtimeConfigDir(config: Pick<AgentsConfig, 'RUNTIME_CONFIG_DIR'>): string {
  return config.RUNTIME_CONFIG_DIR === '-' ? '' : config.RUNTIME_CONFIG_DIR || join(repoRoot, '.cache/runtime/configs');
}

/** The store of snapshot archives the config names: a directory (the default), or an S3 bucket. */
export function configuredSnapshotStore(config: AgentsConfig): SnapshotStore {
  if (config.SNAPSHOT_STORE === 'directory')
    return directorySnapshotStore(config.SNAPSHOT_DIR || join(repoRoot, '.cache/snapshots'));
  return s3SnapshotStore({
    bucket: config.SNAPSHOT_S3_BUCKET,
    region: config.SNAPSHOT_S3_REGION,
    endpoint: config.SNAPSHOT_S3_ENDPOINT || undefined,
    prefix: config.SNAPSHOT_S3_PREFIX,
    credentials: config.SNAPSHOT_S3_SECRET_ACCESS_KEY
      ? { accessKeyId: config.SNAPSHOT_S3_ACCESS_KEY_ID, secretAccessKey: config.SNAPSHOT_S3_SECRET_ACCESS_KEY }
      : undefined,
    timeoutMs: config.SNAPSHOT_S3_TIMEOUT_MS,
  });
}

type ContextLog = Pick<Log, 'warn' | 'error'> & Partial<Pick<Log, 'info'>>;

/** Whether an owner may have an agent (up) now: their plan's limits and the platform's capacity, from config. */
function planAllowanceOf(config: AgentsConfig, db: SystemDb) {
  const GiB = 1024 ** 3;
  const admins = adminEmailSet(config.ADMIN_EMAILS);
  const needsVerifiedEmail = adminNeedsVerifiedEmail(config.NODE_ENV);
  return agentAllowance(db, {
    activeStatuses: activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES),
    // Admin, as at the edge: a listed address, verified outside development.
    isAdmin: (owner) => isAdminEmail(owner.email, admins) && (owner.emailVerified || !needsVerifiedEmail),
    adminAgentLimit: config.ADMIN_AGENT_LIMIT,
    userMemoryMaxBytes: config.AGENT_MEMORY_PER_USER_MAX_GB * GiB,
    userCpusMax: config.AGENT_CPUS_PER_USER_MAX,
    platformAgentsMax: config.PLATFORM_AGENTS_MAX,
    platformMemoryMaxBytes: config.PLATFORM_AGENT_MEMORY_MAX_GB * GiB,
  });
}

/** The agent runtime (launches, warm containers, health, lifecycle) with the settings config gives it. */
function agentRuntimeOf(
  config: AgentsConfig,
  parts: Pick<AgentRuntimeOptions, 'db' | 'driver' | 'keyring' | 'exclusive' | 'admit' | 'log'>,
) {
  const [first, last] = config.AGENT_PORT_RANGE.split('-').map(Number) as [number, number];
  return createAgentRuntime({
    ...parts,
    ports: { first, last },
    aiGatewayUrl: config.AGENT_AI_GATEWAY_URL,
    consoleOrigin: new URL(config.PUBLIC_BASE_URL).origin,
    publicUrl: config.AGENT_PUBLIC_URL,
    readyTimeoutMs: config.AGENT_READY_TIMEOUT_MS,
    probeTimeoutMs: config.AGENT_PROBE_TIMEOUT_MS,
    launchConcurrency: config.RUNTIME_LAUNCH_CONCURRENCY,
    telegramApiRoot: config.AGENT_TELEGRAM_API_ROOT || undefined,
    warm: warmClasses(config.RUNTIME_WARM_POOL, parts.driver.defaultImage),
    warmBooted: config.RUNTIME_WARM_BOOT === 'booted',
  });
}

/** Hibernation on the agent runtime, with the idle times and thresholds config gives it. */
function hibernationOf(
  config: AgentsConfig,
  parts: Pick<AgentHibernationOptions, 'db' | 'driver' | 'redis' | 'exclusive' | 'activity'> & { log: ContextLog },
  agentRuntime: AgentRuntime,
) {
  return agentHibernation({
    ...parts,
    prefix: config.QUEUE_PREFIX,
    // A wake waits for another process's wake of the same agent as long as a boot may take.
    exclusiveWake: agentOperations({
      redis: parts.redis,
      prefix: config.QUEUE_PREFIX,
      waitMs: config.AGENT_READY_TIMEOUT_MS,
      log: parts.log,
    }),
    readiness: agentRuntime,
    bringUp: (agentId: string) => agentRuntime.bringUp(agentId),
    restart: (agentId: string) => agentRuntime.restart(agentId),
    recycleAfter: parseHibernationPlans(config.AGENT_RECYCLE_IDLE_AFTER),
    recycleMemoryShare: config.AGENT_RECYCLE_MEMORY_PERCENT / 100,
    pauseAfter: parseHibernationPlans(config.HIBERNATE_PAUSE_AFTER),
    stopAfter: parseHibernationPlans(config.HIBERNATE_STOP_AFTER),
    bootEstimateMs: config.HIBERNATE_BOOT_ESTIMATE_MS,
    sweepEveryMs: config.HIBERNATE_SWEEP_EVERY_MS,
  });
}

/**
 * The agent runtime as everyone gets it (web, backend, console, workers): an operation replacing an
 * agent's state is preceded by a snapshot of it, and a removed agent takes its snapshot archives and
 * its activity along (their rows go with its row).
 */
function snapshottingRuntime(
  agentRuntime: AgentRuntime,
  {
    db,
    snapshots,
    store,
    activity,
    log,
  }: {
    db: SystemDb;
    snapshots: AgentSnapshots;
    store: SnapshotStore;
    activity: AgentActivity;
    log: ContextLog;
  },
) {
  return {
    ...agentRuntime,
    updateImage: async (agentId: string, image: string) => {
      await snapshots.beforeOperation(agentId, 'before-update');
      return agentRuntime.updateImage(agentId, image);
    },
    repair: async (agentId: string, options: { snapshotFirst?: boolean } = {}) => {
      if (options.snapshotFirst !== false) await snapshots.beforeOperation(agentId, 'before-repair');
      return agentRuntime.repair(agentId);
    },
    resetMemory: async (agentId: string) => {
      await snapshots.beforeOperation(agentId, 'before-reset');
      return agentRuntime.resetMemory(agentId);
    },
    remove: async (agentId: string) => {
      const archives = await listSnapshots(db, agentId);
      const removed = await agentRuntime.remove(agentId);
      await activity.forget(agentId).catch(() => undefined);
      for (const { id } of archives)
        await store
          .remove(id)
          .catch((error) =>
            log.warn(
              { agentId, snapshotId: id, err: { message: (error as Error).message } },
              'snapshot archive not removed',
            ),
          );
      return removed;
    },
  };
}

/** The runtime driver, the system connection, Redis (for the agents' operation and workspace locks) and the agent runtime built on them, from config. */
export function createRuntimeContext(config: AgentsConfig, log: ContextLog) {
  const db = createSystemDb(config.DATABASE_SYSTEM_URL, { max: config.DATABASE_POOL_SIZE });
  const redis = redisConnection(
    config.REDIS_URL,
    { maxRetriesPerRequest: 1, commandTimeout: 5000 },
    { purpose: 'agent operation locks', log },
  );
  const driver = createRuntimeDriver({
    ...config,
    RUNTIME_DATA_DIR: config.RUNTIME_DATA_DIR || join(repoRoot, '.cache/runtime'),
    RUNTIME_CONFIG_DIR: runtimeConfigDir(config),
    repoRoot,
  });
  const allowance = planAllowanceOf(config, db);
  const exclusive = agentOperations({
    redis,
    prefix: config.QUEUE_PREFIX,
    waitMs: config.AGENT_OPERATION_WAIT_MS,
    log,
  });
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const agentRuntime = agentRuntimeOf(config, { db, driver, keyring, exclusive, admit: allowance.admit, log });
  const activity = agentActivity(redis, {
    prefix: config.QUEUE_PREFIX,
    everyMs: config.HIBERNATE_ACTIVITY_EVERY_MS,
    log,
  });
  const hibernation = hibernationOf(config, { db, driver, redis, exclusive, activity, log }, agentRuntime);
  const store = configuredSnapshotStore(config);
  // A clone that cannot be finished is removed as the owner's delete removes it (`runtime`, below).
  const snapshots = agentSnapshots({
    db,
    driver,
    keyring,
    store,
    exclusive,
    rebuild: agentRuntime.rebuild,
    remove: (agentId) => runtime.remove(agentId),
    log,
  });
  const runtime = snapshottingRuntime(agentRuntime, { db, snapshots, store, activity, log });
  return {
    db,
    driver,
    runtime,
    /** One container operation per agent at a time, across processes (the watchdog takes its turn too). */
    exclusive,
    workspaces: workspaceAdmission({ redis, prefix: config.QUEUE_PREFIX, waitMs: config.AGENT_OPERATION_WAIT_MS, log }),
    allowance,
    snapshotStore: store,
    snapshots,
    /** Idle agents paused and stopped, and woken by whatever reaches them (issue 30). */
    hibernation,
    async close() {
      await runtime.settle();
      await driver.close();
      store.close?.();
      await db.destroy();
      redis.disconnect();
    },
  };
}

export type RuntimeContext = ReturnType<typeof createRuntimeContext>;
