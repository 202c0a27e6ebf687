import type Docker from 'dockerode';
import type { createAgentNetworks } from '../agent-networks.ts';
import { AGENT_NAME_PREFIX, statusCode } from '../docker-common.ts';
import { type ContainerState, RuntimeError } from '../driver.ts';
import { type EgressProxy, unconfinedEgress } from '../egress.ts';
import type { StateDisks } from '../state-disk.ts';
import type { HostDirectories } from './host-directories.ts';

export interface DockerDriverOptions {
  /** `unix:///run/podman/podman.sock`, `unix:///var/run/docker.sock`, `tcp://host:2375`. */
  dockerHost: string;
  /** Every container of this platform instance carries it; list() sees only these. */
  instance: string;
  defaultImage: string;
  /** Host address ports are published on, and where the platform reaches them. */
  publishHost: string;
  pidsLimit: number;
  stopTimeoutSeconds: number;
  /** Per engine call. */
  timeoutMs: number;
  /** Engine network mode; '' for the engine's default bridge. */
  networkMode: string;
  /**
   * A user-defined network of the platform's containers that call agents (compose): each agent gets an
   * internal network of its own, `<network>-<agentId>` (agent-networks.ts), which those containers
   * (labelled PEER_LABEL) join; there it answers to `agentGatewayHost(agentId)` at AGENT_PORT, no
   * agent shares a network with another, nothing is published on the host and there are no warm
   * containers. '' publishes each gateway on `publishHost`.
   */
  network?: string;
  /**
   * A host directory the engine can bind-mount from (a local engine): each container's config
   * directory (read-only) and each agent's state directory live there, and warm containers are
   * possible. '' copies the config into the container through the engine API instead and keeps
   * state in named volumes (remote engines), which costs an engine call per container.
   */
  configDir: string;
  /** Production: no agent container is created unless its egress is confined (unconfinedEgress). */
  requireConfinedEgress?: boolean;
  /**
   * Agents' HTTP(S) proxy (compose: the egress proxy, their only way out) and the hosts they reach
   * directly; with a grant key, each agent's proxy URL carries its signed grant of its egressHosts.
   */
  egressProxy?: EgressProxy;
}

/** What the docker driver's modules share: the engine, the driver's options and where agents' files live. */
export interface Engine {
  docker: Docker;
  options: DockerDriverOptions;
  /** The engine bind-mounts from this host's `configDir` (else: a remote engine, state in named volumes). */
  local: boolean;
  dirs: HostDirectories;
  disks: StateDisks;
  /** State directories this process mounted or found mounted, by the container mounting them (a start needs no look). */
  mountedState: Map<string, string>;
  /** Each agent's own network, on a shared network (`options.network`); null without one. */
  agentNetworks: ReturnType<typeof createAgentNetworks> | null;
}

export function engineOptions(dockerHost: string, timeoutMs: number): Docker.DockerOptions {
  if (dockerHost.startsWith('unix://')) return { socketPath: dockerHost.slice('unix://'.length), timeout: timeoutMs };
  if (dockerHost.startsWith('/')) return { socketPath: dockerHost, timeout: timeoutMs };
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return {
    host: url.hostname,
    port: Number(url.port || 2375),
    protocol: url.protocol === 'https:' ? 'https' : 'http',
    timeout: timeoutMs,
  };
}

/** One engine operation: any failure but a RuntimeError becomes one, naming the operation, its status and whether the port was taken. */
export async function engineCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    const message = (error as Error).message ?? '';
    const portInUse = /address already in use|port is already allocated|bind/i.test(message);
    throw new RuntimeError(`container engine: ${what} failed${statusCode(error) ? ` (${statusCode(error)})` : ''}`, {
      cause: error,
      portInUse,
    });
  }
}

/** 304: already started / already stopped. */
export const ignoreNotModified = (error: unknown) => {
  if (statusCode(error) !== 304) throw error;
};

export const isPaused = async (docker: Docker, id: string) =>
  (
    await docker
      .getContainer(id)
      .inspect()
      .catch(() => null)
  )?.State?.Status === 'paused';

export function toState(status: string | undefined): ContainerState {
  switch (status) {
    case 'running':
      return 'running';
    case 'created':
    case 'configured':
      return 'created';
    case 'paused':
      return 'paused';
    case 'restarting':
      return 'restarting';
    case 'dead':
      return 'dead';
    default:
      return 'stopped';
  }
}

/** The agent a container belongs to: its name says so (a warm container is renamed when claimed). */
export function agentIdOf(name: string | undefined): string {
  const bare = (name ?? '').replace(/^\//, '');
  return bare.startsWith(AGENT_NAME_PREFIX) ? bare.slice(AGENT_NAME_PREFIX.length, bare.lastIndexOf('-')) : '';
}

/** The named volume of an agent's state on a remote engine. */
export const stateVolume = (instance: string, agentId: string) =>
  `agentyard-${instance}-state-${agentId}`.replace(/[^a-zA-Z0-9_.-]/g, '-');

/** A check that agents' egress is confined where it must be: asked of the engine once; a failed look is asked again. */
export function egressConfinementCheck(docker: Docker, options: DockerDriverOptions): () => Promise<void> {
  /** Why agents' egress is not confined (null: it is). */
  let confinement: Promise<string | null> | undefined;
  return async () => {
    if (!options.requireConfinedEgress) return;
    confinement ??= unconfinedEgress({
      network: options.network ?? '',
      networkMode: options.networkMode,
      isInternalNetwork: async (name) => (await docker.getNetwork(name).inspect()).Internal === true,
    }).catch((error: unknown) => {
      confinement = undefined;
      throw new RuntimeError("container engine: checking agents' egress failed", { cause: error });
    });
    const refusal = await confinement;
    if (refusal) throw new RuntimeError(refusal);
  };
}

/** A container's CPU limit within the host's CPUs (asked of the engine once; the first wanted count if it cannot say). */
export function hostCpuLimit(docker: Docker): (wanted: number) => Promise<number> {
  let hostCpus: Promise<number> | undefined;
  return async (wanted) => {
    hostCpus ??= docker.info().then(
      (info: { NCPU?: number }) => info.NCPU ?? wanted,
      () => wanted,
    );
    return Math.min(wanted, await hostCpus);
  };
}

/** The engine's name and version, asked once; a failed ask is asked again. */
export function engineVersion(docker: Docker): () => Promise<{ engine: string; version: string }> {
  let asked: Promise<{ engine: string; version: string }> | undefined;
  return async () => {
    asked ??= engineCall('version', () => docker.version()).then((v) => ({
      engine: v.Components?.some((c) => /podman/i.test(c.Name)) ? 'podman' : 'docker',
      version: v.Version,
    }));
    return asked.catch((error) => {
      asked = undefined;
      throw error;
    });
  };
}
