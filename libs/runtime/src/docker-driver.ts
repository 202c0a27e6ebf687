import { registerDependency } from '@agentyard/observability';
import Docker from 'dockerode';
import { createAgentNetworks } from './agent-networks.ts';
import { followContainerEvents } from './container-events.ts';
import { followContainerLogs, readContainerLogs } from './container-logs.ts';
import { NODE_UID } from './docker-common.ts';
import { createDockerWarmPool } from './docker-warm-pool.ts';
import { ensureAgentNetwork, removeAgentState } from './docker/agent-state.ts';
import { agentGatewayHost, createOptions } from './docker/container-spec.ts';
import {
  type ContainerOptions,
  containerStats,
  createContainer,
  inspectContainer,
  listContainers,
  readContainerConfig,
  removeContainer,
  replaceContainerConfig,
  restartContainer,
  startContainer,
  stopContainer,
} from './docker/containers.ts';
import {
  agentIdOf,
  type DockerDriverOptions,
  type Engine,
  egressConfinementCheck,
  engineCall,
  engineOptions,
  engineVersion,
  hostCpuLimit,
} from './docker/engine.ts';
import { hostDirectoriesOf, newConfigDir, stateDirOf, writeConfig } from './docker/host-directories.ts';
import { AGENT_PORT, LABELS, type RuntimeDriver } from './driver.ts';
import { createStateDisks } from './state-disk.ts';

export { DEFAULT_STATE_DISK_BYTES } from './docker-common.ts';
export { agentGatewayHost } from './docker/container-spec.ts';
export type { DockerDriverOptions } from './docker/engine.ts';

/** Agents as hardened containers on Docker Engine or Podman's Docker-compatible API. */
export function createDockerDriver(options: DockerDriverOptions): RuntimeDriver {
  const docker = new Docker(engineOptions(options.dockerHost, options.timeoutMs));
  // Log streams stay open while the agent is quiet: no idle timeout on their connection.
  const follower = new Docker(engineOptions(options.dockerHost, 0));
  const network = options.network ?? '';
  const e: Engine = {
    docker,
    options,
    local: options.configDir !== '',
    dirs: hostDirectoriesOf(options.configDir, options.instance),
    disks: createStateDisks(),
    mountedState: new Map(),
    agentNetworks: network ? createAgentNetworks(docker, { prefix: network, instance: options.instance }) : null,
  };
  const ensureConfinedEgress = egressConfinementCheck(docker, options);
  const cpuLimit = hostCpuLimit(docker);
  // Not ready while agents could not be started: /readyz names the reason.
  const withdrawCheck = registerDependency('container-engine', async () => {
    await docker.ping();
    await ensureConfinedEgress();
  });

  /** Every agent container (warm ones too) is made with these: none without confined egress in production. */
  const containerOptions: ContainerOptions = async (c) => {
    await ensureConfinedEgress();
    const agentId = c.labels[LABELS.agentId] ?? '';
    await ensureAgentNetwork(e, agentId);
    // The network an agent's container joins: its own.
    const joined = e.agentNetworks ? e.agentNetworks.nameOf(agentId) : '';
    return createOptions(options, c, joined, await cpuLimit(c.resources.cpus));
  };

  return {
    kind: 'docker',
    defaultImage: options.defaultImage,
    version: engineVersion(docker),
    create: (spec) => createContainer(e, containerOptions, spec),
    start: (id) => startContainer(e, id),
    stop: (id) => stopContainer(e, id),
    replaceConfig: (id, config) => replaceContainerConfig(e, id, config),
    readConfig: (id) => readContainerConfig(e, id),
    async pause(id) {
      await engineCall('pause', () => docker.getContainer(id).pause());
    },
    async unpause(id) {
      await engineCall('unpause', () => docker.getContainer(id).unpause());
    },
    restart: (id) => restartContainer(e, id),
    inspect: (id) => inspectContainer(e, id),
    stats: (id) => containerStats(e, id),
    remove: (id) => removeContainer(e, id),
    list: (filter = {}) => listContainers(e, filter),
    removeState: (agentId) => removeAgentState(e, agentId),
    logs: (id, tail) => engineCall('logs', () => readContainerLogs(docker, id, tail)),
    followLogs: (id, signal) => followContainerLogs(follower, id, signal, options.timeoutMs),
    events: (signal, onOpen) =>
      followContainerEvents(
        follower,
        `${LABELS.instance}=${options.instance}`,
        signal,
        options.timeoutMs,
        agentIdOf,
        onOpen,
      ),
    stateDirectory: (agentId) => (e.local ? { path: stateDirOf(e.dirs, agentId), ownerUid: NODE_UID } : null),

    // A warm container is started before its agent is known, so it could not answer to the agent's name.
    ...(e.local && !network
      ? {
          warm: createDockerWarmPool({
            docker,
            instance: options.instance,
            configRoot: e.dirs.configRoot,
            claimsRoot: e.dirs.claimsRoot,
            stateDirOf: (key) => stateDirOf(e.dirs, key),
            disks: e.disks,
            mountedState: e.mountedState,
            engineCall,
            newConfigDir: (key, suffix) => newConfigDir(e.dirs, key, suffix),
            writeConfig,
            containerOptions,
            grantsEgress: Boolean(options.egressProxy?.grantKey),
          }),
        }
      : {}),

    gatewayUrl(hostPort, agentId) {
      if (network) return `http://${agentGatewayHost(agentId)}:${AGENT_PORT}`;
      return `http://${options.publishHost === '0.0.0.0' ? '127.0.0.1' : options.publishHost}:${hostPort}`;
    },
    async close() {
      withdrawCheck();
    },
  };
}
