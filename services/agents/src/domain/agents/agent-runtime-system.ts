import type { Keyring } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import type { PortRange, RuntimeDriver, WarmClass } from '@agentyard/runtime';
import type { ExclusiveOperation } from './agent-operations.ts';
import { agentHealth } from './runtime/health.ts';
import { containerLauncher } from './runtime/launch-system.ts';
import { agentLifecycle } from './runtime/lifecycle-system.ts';
import { warmContainers } from './runtime/warm-pool-system.ts';

export type { ContainerHealth } from './runtime/health.ts';
export type { Deployed } from './runtime/launch-system.ts';

export interface AgentRuntimeOptions {
  db: SystemDb;
  driver: RuntimeDriver;
  keyring: Keyring;
  ports: PortRange;
  aiGatewayUrl: string;
  /** The console's origin, the one browser origin an agent's Control UI accepts. */
  consoleOrigin: string;
  /** Agents' public base URL (`<url>/<agentId>`), stored on the user once an agent runs. */
  publicUrl: string;
  readyTimeoutMs: number;
  probeTimeoutMs: number;
  /** Containers created and started at once (the rest wait their turn in arrival order). */
  launchConcurrency: number;
  /** Warm containers to keep per class (default image): empty for none. */
  warm: WarmClass[];
  /** One container operation per agent at a time, across processes. */
  exclusive: ExclusiveOperation;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Agents on the runtime, for workers and API-key routes (system connection): launches, the warm
 * containers, health and the lifecycle operations, composed from their modules under `runtime/`.
 */
export function createAgentRuntime(options: AgentRuntimeOptions) {
  const launcher = containerLauncher(options);
  const warm = warmContainers({ ...options, launcher });
  const readiness = agentHealth(options);
  const lifecycle = agentLifecycle({ ...options, launcher, warm, readiness });
  return {
    ...lifecycle,
    health: readiness.health,
    waitUntilReady: readiness.waitUntilReady,
    containersOf: launcher.containersOf,
    topUpWarm: warm.topUp,
    /** No more warm containers from this process: waits for a top-up under way (before closing the connections). */
    settle: warm.settle,
  };
}

export type AgentRuntime = ReturnType<typeof createAgentRuntime>;
