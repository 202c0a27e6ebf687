import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createDockerDriver } from './docker-driver.ts';
import { createProcessDriver } from './process-driver.ts';
import type { RuntimeDriver } from './driver.ts';

export * from './driver.ts';
export { resourcesFor, RESOURCES_BY_ALIAS, warmClasses } from './resources.ts';
export { claimHostPort, type PortRange } from './ports.ts';
export { createLaunchSlots, type LaunchSlots } from './launch-slots.ts';
export { allowAgentListener } from './egress.ts';
export { createQuietPeriod, type QuietPeriod } from './quiet-period.ts';
export { agentGatewayHost, createDockerDriver, type DockerDriverOptions } from './docker-driver.ts';
export { createProcessDriver, type ProcessDriverOptions } from './process-driver.ts';
export {
  agentWorkspace,
  normaliseWorkspacePath,
  WorkspaceLimitError,
  WorkspaceMissingError,
  WorkspacePathError,
  WORKSPACE_DIR,
  type AgentWorkspace,
  type WorkspaceEntry,
  type WorkspaceLimits,
} from './agent-workspace.ts';
export { logDemultiplexer } from './container-logs.ts';

/** The OpenClaw gateway that infra/agent-image/build.sh installs into the machine-wide build cache. */
export const OPENCLAW_ENTRY = join(process.env.AGENTYARD_IMAGE_CACHE ?? '/var/cache/agentyard/agent-image', 'openclaw-2026.9.6/node_modules/openclaw/openclaw.mjs');

/** The built OpenClaw Control UI in that same package, which the platform serves itself (services/agents domain/agent-work/control-ui-copy.ts). */
export const OPENCLAW_CONTROL_UI_ROOT = join(dirname(OPENCLAW_ENTRY), 'dist', 'control-ui');

/** The production agent image; locally infra/agent-image/build.sh builds the same tag from npm. */
export const DEFAULT_AGENT_IMAGE = 'localhost/agentyard-openclaw:2026.9.6';

export interface RuntimeSettings {
  RUNTIME_DRIVER: 'docker' | 'process';
  DOCKER_HOST: string;
  RUNTIME_INSTANCE: string;
  AGENT_IMAGE: string;
  RUNTIME_PUBLISH_HOST: string;
  RUNTIME_DATA_DIR: string;
  RUNTIME_STOP_TIMEOUT_SECONDS: number;
  RUNTIME_ENGINE_TIMEOUT_MS: number;
  RUNTIME_PIDS_LIMIT: number;
  RUNTIME_NETWORK_MODE: string;
  RUNTIME_NETWORK?: string;
  RUNTIME_CONFIG_DIR: string;
  repoRoot: string;
}

/**
 * The gateway entry the process driver runs by default: the real OpenClaw gateway when the agent
 * image build has installed it, else the minimal gateway that answers the same probes and hooks.
 */
function defaultProcessEntry(repoRoot: string): string {
  return existsSync(OPENCLAW_ENTRY) ? OPENCLAW_ENTRY : join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
}

export function createRuntimeDriver(settings: RuntimeSettings): RuntimeDriver {
  if (settings.RUNTIME_NETWORK && settings.RUNTIME_NETWORK_MODE) throw new Error('RUNTIME_NETWORK and RUNTIME_NETWORK_MODE exclude each other: set one');
  if (settings.RUNTIME_DRIVER === 'process') {
    return createProcessDriver({
      dataDir: settings.RUNTIME_DATA_DIR,
      instance: settings.RUNTIME_INSTANCE,
      defaultImage: settings.AGENT_IMAGE || defaultProcessEntry(settings.repoRoot),
      nodeBinary: process.execPath,
      stopTimeoutSeconds: settings.RUNTIME_STOP_TIMEOUT_SECONDS,
    });
  }
  return createDockerDriver({
    dockerHost: settings.DOCKER_HOST,
    instance: settings.RUNTIME_INSTANCE,
    defaultImage: settings.AGENT_IMAGE || DEFAULT_AGENT_IMAGE,
    publishHost: settings.RUNTIME_PUBLISH_HOST,
    pidsLimit: settings.RUNTIME_PIDS_LIMIT,
    stopTimeoutSeconds: settings.RUNTIME_STOP_TIMEOUT_SECONDS,
    timeoutMs: settings.RUNTIME_ENGINE_TIMEOUT_MS,
    networkMode: settings.RUNTIME_NETWORK_MODE,
    network: settings.RUNTIME_NETWORK ?? '',
    configDir: settings.RUNTIME_CONFIG_DIR,
  });
}
