import { openAgentSecret } from '@agentyard/agent-gateway';
import type { Keyring } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';
import type { PortRange, RuntimeDriver, WarmClass } from '@agentyard/runtime';
import type { ExclusiveOperation } from '../agent-operations.ts';
import type { AgentRow } from '../../agents/agent-views.ts';
import { agentHealth } from '../health.ts';
import { containerLauncher, type Deployed } from './launch.ts';
import { agentLifecycle } from './lifecycle.ts';
import { warmContainers } from './warm-pool.ts';

export type { ContainerHealth } from '../health.ts';
export type { Deployed } from './launch.ts';

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
  /** Development and tests only: the Telegram Bot API root agents' Telegram channels call (a local server). */
  telegramApiRoot?: string;
  /** Warm containers to keep per class (default image): empty for none. */
  warm: WarmClass[];
  /** Warm containers' gateways boot before their claim and take their agent's config by hot reload. */
  warmBooted: boolean;
  /** One container operation per agent at a time, across processes. */
  exclusive: ExclusiveOperation;
  /** Throws why an agent may not come up now (its owner's plan, the platform's capacity). */
  admit: (agent: AgentRow) => Promise<string>;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Agents on the runtime, for workers and API-key routes (system connection): launches, the warm
 * containers, health and the lifecycle operations, composed from their modules under `runtime/`.
 */
export function createAgentRuntime(options: AgentRuntimeOptions) {
  const launcher = containerLauncher(options);
  const readiness = agentHealth(options);
  const warm = warmContainers({ ...options, launcher, readiness });
  const lifecycle = agentLifecycle({ ...options, launcher, warm, readiness });
  return {
    ...lifecycle,
    health: readiness.health,
    waitUntilReady: readiness.waitUntilReady,
    /**
     * Ready for a turn: the gateway answers /readyz and, when its config reaches it by hot reload (a
     * claimed booted warm gateway, ready before the reload), takes the agent's own token.
     */
    waitUntilServing: (agent: AgentRow, deployed: Deployed) =>
      readiness.waitUntilReady(
        agent.gateway_url ?? '',
        undefined,
        deployed.hotReloads && agent.gateway_token_sealed
          ? openAgentSecret(options.keyring, agent.id, 'gateway-token', agent.gateway_token_sealed)
          : undefined,
      ),
    containersOf: launcher.containersOf,
    topUpWarm: warm.topUp,
    /** No more warm containers from this process: waits for a top-up under way (before closing the connections). */
    settle: warm.settle,
  };
}

export type AgentRuntime = ReturnType<typeof createAgentRuntime>;
