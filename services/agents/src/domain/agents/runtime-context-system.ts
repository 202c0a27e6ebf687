import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { parseKeyring } from '@agentyard/crypto';
import { createSystemDb } from '@agentyard/db/system';
import { createRuntimeDriver, warmClasses } from '@agentyard/runtime';
import { redisConnection } from '@agentyard/queue';
import type { AgentsConfig } from '../../config.ts';
import { agentOperations } from './agent-operations.ts';
import { createAgentRuntime } from './agent-runtime-system.ts';
import type { Log } from '@agentyard/http';

/** The docker driver's host directory for agents' config and state ('' when copied through the engine API). */
export function runtimeConfigDir(config: Pick<AgentsConfig, 'RUNTIME_CONFIG_DIR'>): string {
  return config.RUNTIME_CONFIG_DIR === '-' ? '' : config.RUNTIME_CONFIG_DIR || join(repoRoot, '.cache/runtime/configs');
}

/** The runtime driver, the system connection, Redis (for the agents' operation locks) and the agent runtime built on them, from config. */
export function createRuntimeContext(config: AgentsConfig, log: Pick<Log, 'warn' | 'error'>) {
  const db = createSystemDb(config.DATABASE_SYSTEM_URL, { max: config.DATABASE_POOL_SIZE });
  const redis = redisConnection(config.REDIS_URL, { maxRetriesPerRequest: 1, commandTimeout: 5000 }, { purpose: 'agent operation locks', log });
  const configDir = runtimeConfigDir(config);
  const driver = createRuntimeDriver({ ...config, RUNTIME_DATA_DIR: config.RUNTIME_DATA_DIR || join(repoRoot, '.cache/runtime'), RUNTIME_CONFIG_DIR: configDir, repoRoot });
  const [first, last] = config.AGENT_PORT_RANGE.split('-').map(Number) as [number, number];
  const runtime = createAgentRuntime({
    db,
    driver,
    keyring: parseKeyring(config.ENCRYPTION_KEYS),
    ports: { first, last },
    aiGatewayUrl: config.AGENT_AI_GATEWAY_URL,
    consoleOrigin: new URL(config.PUBLIC_BASE_URL).origin,
    publicUrl: config.AGENT_PUBLIC_URL,
    readyTimeoutMs: config.AGENT_READY_TIMEOUT_MS,
    probeTimeoutMs: config.AGENT_PROBE_TIMEOUT_MS,
    launchConcurrency: config.RUNTIME_LAUNCH_CONCURRENCY,
    warm: warmClasses(config.RUNTIME_WARM_POOL, driver.defaultImage),
    log,
    exclusive: agentOperations({ redis, prefix: config.QUEUE_PREFIX, waitMs: config.AGENT_OPERATION_WAIT_MS, log }),
  });
  return {
    db,
    driver,
    runtime,
    async close() {
      await runtime.settle();
      await driver.close();
      await db.destroy();
      redis.disconnect();
    },
  };
}

export type RuntimeContext = ReturnType<typeof createRuntimeContext>;
