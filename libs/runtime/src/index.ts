import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createDockerDriver } from './docker-driver.ts';
import type { RuntimeDriver } from './driver.ts';
import { egressProxyOf } from './egress.ts';
import { createKubernetesDriver } from './kubernetes-driver.ts';
import { kubernetesDriverOptions, type KubernetesSettings } from './kubernetes-settings.ts';
import { createProcessDriver } from './process-driver.ts';

export {
  type AgentWorkspace,
  agentWorkspace,
  normaliseWorkspacePath,
  WORKSPACE_DIR,
  WORKSPACE_WALK_LIMITS,
  type WorkspaceEntry,
  WorkspaceLimitError,
  type WorkspaceLimits,
  WorkspaceMissingError,
  WorkspacePathError,
} from './agent-workspace.ts';
export {
  isLeftOutOfSnapshots,
  packAgentState,
  RESTORE_STAGING_PREFIX,
  SNAPSHOT_FORMAT,
  SNAPSHOT_LIMITS,
  SnapshotArchiveError,
  type SnapshotManifest,
  SnapshotTooLargeError,
  unpackAgentState,
  verifyAgentArchive,
} from './agent-snapshot.ts';
export { logDemultiplexer } from './container-logs.ts';
export { agentGatewayHost, createDockerDriver, type DockerDriverOptions } from './docker-driver.ts';
export { AGENT_BRIDGE_PREFIX, PEER_ALIAS_LABEL, PEER_LABEL } from './agent-networks.ts';
export { createKubernetesDriver, type KubernetesDriverOptions, priorityClassOf } from './kubernetes-driver.ts';
export { agentListenersOf, kubernetesDriverOptions, type KubernetesSettings } from './kubernetes-settings.ts';
export * from './driver.ts';
export {
  allowAgentListener,
  EGRESS_OPT_OUT,
  type EgressProxy,
  type EgressSettings,
  egressProxyEnv,
  egressProxyOf,
  unconfinedEgress,
} from './egress.ts';
export { grantedProxyUrl, hostGranted, signEgressGrant, verifyEgressGrant } from './egress-grant.ts';
export { createLaunchSlots, type LaunchSlots } from './launch-slots.ts';
export { claimHostPort, type PortRange } from './ports.ts';
export { createProcessDriver, type ProcessDriverOptions } from './process-driver.ts';
export { createQuietPeriod, type QuietPeriod } from './quiet-period.ts';
export { AGENT_SECRETS_DIR, agentSecretFilePath, writeSecretFiles } from './secret-files.ts';
export { secretScrubber } from './secret-scrubbing.ts';
export { aliasOf, RESOURCES_BY_ALIAS, resourcesFor, warmClasses } from './resources.ts';
export { inProcessLedger, type WorkspaceLedger } from './workspace-ledger.ts';

/** The OpenClaw gateway that infra/agent-image/build.sh installs into the machine-wide build cache. */
export const OPENCLAW_ENTRY = join(
  process.env.AGENTYARD_IMAGE_CACHE ?? '/var/cache/agentyard/agent-image',
  'openclaw-2026.9.6/node_modules/openclaw/openclaw.mjs',
);

/** The built OpenClaw Control UI in that same package, which the platform serves itself (services/agents domain/gateway/control-ui-copy.ts). */
export const OPENCLAW_CONTROL_UI_ROOT = join(dirname(OPENCLAW_ENTRY), 'dist', 'control-ui');

/** The production agent image; locally infra/agent-image/build.sh builds the same tag from npm. */
export const DEFAULT_AGENT_IMAGE = 'localhost/agentyard-openclaw:2026.9.6';

export interface RuntimeSettings extends KubernetesSettings {
  RUNTIME_DRIVER: 'docker' | 'process' | 'kubernetes';
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
  NODE_ENV?: string;
  /** Production starts agents without confined egress only with this explicit opt-out (docs/operations.md). */
  RUNTIME_EGRESS_UNCONFINED?: boolean;
  /** Agents' HTTP(S) proxy URL ('' or unset: none). */
  RUNTIME_EGRESS_PROXY?: string;
  /** The key agents' egress grants are signed with, shared with the egress proxy ('' or unset: no grants). */
  EGRESS_GRANT_KEY?: string;
  /** Where agents reach the AI gateway: reached directly, not through the proxy. */
  AGENT_AI_GATEWAY_URL?: string;
}

/**
 * The gateway entry the process driver runs by default: the real OpenClaw gateway when the agent
 * image build has installed it, else the minimal gateway that answers the same probes and hooks.
 */
function defaultProcessEntry(repoRoot: string): string {
  return existsSync(OPENCLAW_ENTRY) ? OPENCLAW_ENTRY : join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
}

export function createRuntimeDriver(settings: RuntimeSettings): RuntimeDriver {
  if (settings.RUNTIME_NETWORK && settings.RUNTIME_NETWORK_MODE)
    throw new Error('RUNTIME_NETWORK and RUNTIME_NETWORK_MODE exclude each other: set one');
  if (settings.RUNTIME_DRIVER === 'process') {
    return createProcessDriver({
      dataDir: settings.RUNTIME_DATA_DIR,
      instance: settings.RUNTIME_INSTANCE,
      defaultImage: settings.AGENT_IMAGE || defaultProcessEntry(settings.repoRoot),
      nodeBinary: process.execPath,
      stopTimeoutSeconds: settings.RUNTIME_STOP_TIMEOUT_SECONDS,
    });
  }
  if (settings.RUNTIME_DRIVER === 'kubernetes')
    return createKubernetesDriver(kubernetesDriverOptions(settings, settings.AGENT_IMAGE || DEFAULT_AGENT_IMAGE));
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
    requireConfinedEgress: settings.NODE_ENV === 'production' && settings.RUNTIME_EGRESS_UNCONFINED !== true,
    egressProxy: egressProxyOf(settings),
  });
}
