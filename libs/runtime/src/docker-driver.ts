import { registerDependency } from '@agentyard/observability';
import { chown, mkdir, readdir, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import Docker from 'dockerode';
import { pack } from 'tar-stream';
import {
  AGENT_NAME_PREFIX,
  containerName,
  DEFAULT_STATE_DISK_BYTES,
  diskOf,
  ignoreMissing,
  MB,
  NODE_UID,
  PORT_KEY,
  statusCode,
  uniqueSuffix,
  type ContainerDescription,
} from './docker-common.ts';
import { createDockerWarmPool } from './docker-warm-pool.ts';
import { createStateDisks } from './state-disk.ts';
import { followContainerLogs, readContainerLogs } from './container-logs.ts';
import { followContainerEvents } from './container-events.ts';
import { egressProxyEnv, unconfinedEgress } from './egress.ts';
import { grantedProxyUrl } from './egress-grant.ts';
import { createAgentNetworks } from './agent-networks.ts';
import { AGENT_SECRETS_DIR, writeSecretFiles } from './secret-files.ts';
import {
  AGENT_PORT,
  LABELS,
  RuntimeError,
  type AgentContainerSpec,
  type ContainerInfo,
  type ContainerState,
  type ContainerStats,
  type RuntimeDriver,
} from './driver.ts';

export { DEFAULT_STATE_DISK_BYTES } from './docker-common.ts';

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
  egressProxy?: { url: string; direct: string[]; grantKey?: string };
}

const HOME = '/home/node';
const STATE_DIR = `${HOME}/.openclaw`;
/** Where a container's config directory is mounted; OPENCLAW_CONFIG_PATH names the file in it. */
const CONFIG_MOUNT = '/run/agentyard';
const CONFIG_FILE = 'openclaw.json';
/**
 * The only writable places besides the agent's state, all in memory (counted in its memory limit):
 * OpenClaw's temp root (/tmp/openclaw) and its fallback ($HOME/.cache/openclaw-<uid>), Node's
 * compile cache (/tmp), and what Podman mounts on a read-only root anyway (/run, /var/tmp), bounded.
 */
const TMPFS = {
  '/tmp': `rw,nosuid,nodev,size=${256 * MB},mode=1777`,
  [`${HOME}/.cache`]: `rw,nosuid,nodev,size=${256 * MB},mode=1777`,
  '/var/tmp': `rw,nosuid,nodev,size=${64 * MB},mode=1777`,
  '/run': `rw,nosuid,nodev,size=${16 * MB},mode=755`,
};
/** Docker keeps three files of 10 MB; Podman 4.3 keeps one, truncated at 10 MB (max-file is Docker's). */
const LOG_CONFIG = { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } };

/** The name an agent's gateway answers to on the shared network (a DNS label: the id is a UUID). */
export const agentGatewayHost = (agentId: string) => `${AGENT_NAME_PREFIX}${agentId}`;

const stateVolume = (instance: string, agentId: string) =>
  `agentyard-${instance}-state-${agentId}`.replace(/[^a-zA-Z0-9_.-]/g, '-');

/** The agent a container belongs to: its name says so (a warm container is renamed when claimed). */
function agentIdOf(name: string | undefined): string {
  const bare = (name ?? '').replace(/^\//, '');
  return bare.startsWith(AGENT_NAME_PREFIX) ? bare.slice(AGENT_NAME_PREFIX.length, bare.lastIndexOf('-')) : '';
}

function engineOptions(dockerHost: string, timeoutMs: number): Docker.DockerOptions {
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

/** 304: already started / already stopped. */
const ignoreNotModified = (error: unknown) => {
  if (statusCode(error) !== 304) throw error;
};

function toState(status: string | undefined): ContainerState {
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

async function tarOf(name: string, text: string, secretFiles: Record<string, string> = {}): Promise<Buffer> {
  const archive = pack();
  archive.entry({ name, mode: 0o600, uid: NODE_UID, gid: NODE_UID }, text);
  if (Object.keys(secretFiles).length > 0) {
    archive.entry({ name: 'credentials', type: 'directory', mode: 0o700, uid: NODE_UID, gid: NODE_UID });
    archive.entry({ name: AGENT_SECRETS_DIR, type: 'directory', mode: 0o700, uid: NODE_UID, gid: NODE_UID });
    for (const [file, content] of Object.entries(secretFiles))
      archive.entry({ name: `${AGENT_SECRETS_DIR}/${file}`, mode: 0o600, uid: NODE_UID, gid: NODE_UID }, content);
  }
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Bytes in and out over every interface, from the engine's stats (absent when it reports none). */
const networkOf = (networks: Record<string, { rx_bytes?: number; tx_bytes?: number }> | undefined) => {
  const all = Object.values(networks ?? {});
  return all.length
    ? {
        networkRxBytes: all.reduce((n, i) => n + (i.rx_bytes ?? 0), 0),
        networkTxBytes: all.reduce((n, i) => n + (i.tx_bytes ?? 0), 0),
      }
    : {};
};

/** Agents as hardened containers on Docker Engine or Podman's Docker-compatible API. */
export function createDockerDriver(options: DockerDriverOptions): RuntimeDriver {
  const docker = new Docker(engineOptions(options.dockerHost, options.timeoutMs));
  // Log streams stay open while the agent is quiet: no idle timeout on their connection.
  const follower = new Docker(engineOptions(options.dockerHost, 0));
  /** Why agents' egress is not confined (null: it is), asked of the engine once; a failed look is asked again. */
  let confinement: Promise<string | null> | undefined;
  const ensureConfinedEgress = async () => {
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
  // Not ready while agents could not be started: /readyz names the reason.
  const withdrawCheck = registerDependency('container-engine', async () => {
    await docker.ping();
    await ensureConfinedEgress();
  });
  let hostCpus: Promise<number> | undefined;
  let engineVersion: Promise<{ engine: string; version: string }> | undefined;
  const local = options.configDir !== '';
  const network = options.network ?? '';
  const agentNetworks = network ? createAgentNetworks(docker, { prefix: network, instance: options.instance }) : null;
  /** The network an agent's container joins: its own. */
  const agentNetworkName = (agentId: string) => (agentNetworks ? agentNetworks.nameOf(agentId) : '');
  /** Its own network made and every peer on it (a peer recreated since lost it): before a create or start. */
  const ensureAgentNetwork = async (agentId: string) => {
    if (agentNetworks && agentId) await engineCall('agent network', () => agentNetworks.ensure(agentId));
  };
  const ensureNetworkOfContainer = async (id: string) => {
    if (agentNetworks)
      await ensureAgentNetwork(agentIdOf((await engineCall('inspect', () => docker.getContainer(id).inspect())).Name));
  };
  const configRoot = join(options.configDir, options.instance, 'config');
  const stateRoot = join(options.configDir, options.instance, 'state');
  const stateDirOf = (key: string) => join(stateRoot, key);
  /** A file per claimed warm container (`<slot>`, holding the agent id): made exclusively, so one claimer wins. */
  const claimsRoot = join(options.configDir, options.instance, 'warm-claims');
  const disks = createStateDisks();
  /** The state path whose disk `path` uses: a warm-born agent's path links to its first container's (`warm.<slot>`). */
  const diskPathOf = async (path: string) => {
    const target = await readlink(path).catch(() => null);
    return target && !target.startsWith('/') ? join(dirname(path), target) : path;
  };
  /** State directories this process mounted or found mounted, by the container mounting them (a start needs no look). */
  const mountedState = new Map<string, string>();
  /** The state directory a container mounts (from the engine), mounted again if the host restarted since. */
  const ensureStateOf = async (id: string) => {
    if (mountedState.has(id)) return;
    const c = await engineCall('inspect', () => docker.getContainer(id).inspect());
    const state = (c.HostConfig.Binds ?? []).map((b) => b.split(':')).find(([, inside]) => inside === STATE_DIR)?.[0];
    if (state?.startsWith(`${stateRoot}/`))
      await disks.ensure(await diskPathOf(state), DEFAULT_STATE_DISK_BYTES, NODE_UID);
    mountedState.set(id, state ?? '');
  };
  // The gateway runs as uid 1000 in the image: it owns its directories (each holds only its own agent's files).
  const ownDirectory = async (dir: string, mode: number) => {
    await mkdir(dir, { recursive: true, mode });
    await chown(dir, NODE_UID, NODE_UID).catch(() => undefined);
  };
  /** A config directory per container (`<key>.<suffix>`): a container kept for rollback keeps the config it was created with. */
  const newConfigDir = async (key: string, suffix = uniqueSuffix()) => {
    await mkdir(configRoot, { recursive: true, mode: 0o711 });
    const dir = join(configRoot, `${key}.${suffix}`);
    await ownDirectory(dir, 0o500);
    return dir;
  };
  /** Written under another name and renamed into place: a waiting launcher never reads half a file. */
  const writeConfig = async (dir: string, text: string) => {
    const partial = join(dir, `.${CONFIG_FILE}.partial`);
    await writeFile(partial, text, { mode: 0o600 });
    await chown(partial, NODE_UID, NODE_UID).catch(() => undefined);
    await rename(partial, join(dir, CONFIG_FILE));
  };
  /** Host directories a container mounts from this platform's config root (to remove with it). */
  const configDirsOf = (binds: string[] | undefined) =>
    (binds ?? []).map((b) => b.split(':')[0]!).filter((p) => p.startsWith(`${configRoot}/`));
  const cpuLimit = async (wanted: number) => {
    hostCpus ??= docker.info().then(
      (info: { NCPU?: number }) => info.NCPU ?? wanted,
      () => wanted,
    );
    return Math.min(wanted, await hostCpus);
  };

  const isPaused = async (id: string) =>
    (
      await docker
        .getContainer(id)
        .inspect()
        .catch(() => null)
    )?.State?.Status === 'paused';
  const engineCall = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
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
  };

  /** A warm container is granted nothing: an agent with channels never claims one (its grant is in its env). */
  const proxyUrlOf = (proxy: { url: string; grantKey?: string }, c: ContainerDescription) =>
    proxy.grantKey
      ? grantedProxyUrl(proxy.url, proxy.grantKey, c.labels[LABELS.agentId] ?? 'warm', c.egressHosts ?? [])
      : proxy.url;

  /**
   * Everything the engine is told about an agent container, warm or not. Nothing of the platform's
   * environment goes in: the agent gets only its config (and, on a local engine, where it is).
   */
  const createOptions = async (
    c: ContainerDescription,
    joined = agentNetworkName(c.labels[LABELS.agentId] ?? ''),
  ): Promise<Docker.ContainerCreateOptions> => ({
    name: c.name,
    Image: c.image,
    Labels: c.labels,
    // uid 1000 whatever the image says (an image a caller names may run as root).
    User: `${NODE_UID}:${NODE_UID}`,
    Env: [
      `HOME=${HOME}`,
      ...(c.configDir ? [`OPENCLAW_CONFIG_PATH=${CONFIG_MOUNT}/${CONFIG_FILE}`] : []),
      ...(options.egressProxy ? egressProxyEnv(proxyUrlOf(options.egressProxy, c), options.egressProxy.direct) : []),
    ],
    ...(c.entrypoint ? { Entrypoint: c.entrypoint, Cmd: [] } : {}),
    ExposedPorts: { [PORT_KEY]: {} },
    StopTimeout: options.stopTimeoutSeconds,
    // On the shared network the agent answers to a name of its own (a container's name changes with each replacement).
    ...(joined
      ? {
          NetworkingConfig: {
            EndpointsConfig: { [joined]: { Aliases: [agentGatewayHost(c.labels[LABELS.agentId] ?? '')] } },
          },
        }
      : {}),
    HostConfig: {
      // HostPort '' lets the engine choose a free port. On the shared network nothing is published.
      ...(network ? {} : { PortBindings: { [PORT_KEY]: [{ HostIp: options.publishHost, HostPort: c.hostPort }] } }),
      Binds: [`${c.state}:${STATE_DIR}`, ...(c.configDir ? [`${c.configDir}:${CONFIG_MOUNT}:ro`] : [])],
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Init: true,
      PidsLimit: options.pidsLimit,
      // Nothing of the image can change; what an agent writes goes to its bounded state or to memory.
      ReadonlyRootfs: true,
      Tmpfs: TMPFS,
      ShmSize: 64 * MB,
      LogConfig: LOG_CONFIG,
      Memory: c.resources.memoryBytes,
      // No swap beyond the memory limit: an agent cannot spill onto the host's swap.
      MemorySwap: c.resources.memoryBytes,
      NanoCpus: Math.round((await cpuLimit(c.resources.cpus)) * 1e9),
      RestartPolicy: { Name: 'no' },
      ...(joined ? { NetworkMode: joined } : options.networkMode ? { NetworkMode: options.networkMode } : {}),
    },
  });

  /** Every agent container (warm ones too) is made with these: none without confined egress in production. */
  const containerOptions = async (c: ContainerDescription): Promise<Docker.ContainerCreateOptions> => {
    await ensureConfinedEgress();
    await ensureAgentNetwork(c.labels[LABELS.agentId] ?? '');
    return createOptions(c);
  };

  const info = (
    c: {
      Id: string;
      Names?: string[];
      Image: string;
      State: string;
      Ports?: Docker.Port[];
      Labels?: Record<string, string>;
    },
    startedAt: string | null,
  ): ContainerInfo => ({
    id: c.Id,
    agentId: agentIdOf(c.Names?.[0]),
    userId: c.Labels?.[LABELS.userId] ?? '',
    image: c.Image,
    state: toState(c.State),
    hostPort: c.Ports?.find((p) => p.PrivatePort === AGENT_PORT && p.PublicPort)?.PublicPort ?? null,
    startedAt,
  });

  return {
    kind: 'docker',
    defaultImage: options.defaultImage,

    async version() {
      engineVersion ??= engineCall('version', () => docker.version()).then((v) => ({
        engine: v.Components?.some((c) => /podman/i.test(c.Name)) ? 'podman' : 'docker',
        version: v.Version,
      }));
      return engineVersion.catch((error) => {
        engineVersion = undefined;
        throw error;
      });
    },

    async create(spec: AgentContainerSpec) {
      const labels = {
        [LABELS.managed]: 'true',
        [LABELS.instance]: options.instance,
        [LABELS.agentId]: spec.agentId,
        [LABELS.userId]: spec.userId,
      };
      // The agent's container on its state (a host folder with its config beside it, or an engine volume).
      const createOn = (state: string, configDir?: string) =>
        engineCall('create', async () =>
          docker.createContainer(
            await containerOptions({
              name: containerName(spec.agentId),
              image: spec.image,
              labels,
              resources: spec.resources,
              hostPort: String(spec.hostPort),
              state,
              configDir,
              egressHosts: spec.egressHosts,
            }),
          ),
        );
      if (local) {
        const state = stateDirOf(spec.agentId);
        const disk = await diskPathOf(state);
        const fresh = await disks.ensure(disk, diskOf(spec.resources), NODE_UID);
        try {
          await writeSecretFiles(state, spec.secretFiles ?? {}, NODE_UID);
          const configDir = await newConfigDir(spec.agentId);
          await writeConfig(configDir, spec.config);
          const container = await createOn(state, configDir);
          mountedState.set(container.id, state);
          return container.id;
        } catch (error) {
          // A disk made for a container that never came to be holds nothing yet: it goes too.
          if (fresh) await disks.remove(disk).catch(() => undefined);
          throw error;
        }
      }
      // The state volume is created by the engine on first use.
      const container = await createOn(stateVolume(options.instance, spec.agentId));
      try {
        await engineCall('write config', async () =>
          container.putArchive(await tarOf('openclaw.json', spec.config, spec.secretFiles), { path: STATE_DIR }),
        );
      } catch (error) {
        await container.remove({ force: true }).catch(() => undefined);
        throw error;
      }
      return container.id;
    },

    async start(id) {
      if (local) await ensureStateOf(id);
      await ensureNetworkOfContainer(id);
      await engineCall('start', () =>
        docker
          .getContainer(id)
          .start()
          .catch(ignoreNotModified)
          // A paused container (a hibernating agent) is started by resuming it: the engine refuses to start it.
          .catch(async (error) => {
            if (!(await isPaused(id))) throw error;
            await docker.getContainer(id).unpause();
          }),
      );
    },

    async stop(id) {
      await engineCall('stop', () =>
        docker
          .getContainer(id)
          .stop({ t: options.stopTimeoutSeconds })
          .catch(ignoreNotModified)
          .catch(ignoreMissing)
          // Podman refuses to stop a paused container: it is resumed, then stopped.
          .catch(async (error) => {
            if (!(await isPaused(id))) throw error;
            await docker.getContainer(id).unpause();
            await docker.getContainer(id).stop({ t: options.stopTimeoutSeconds }).catch(ignoreNotModified);
          }),
      );
    },

    async replaceConfig(id, config) {
      // A remote engine's config was copied in with the container (readConfig answers null there): its agents are rebuilt instead.
      if (!local)
        throw new RuntimeError('container engine: a config copied through the engine API is not replaced in place');
      const c = await engineCall('inspect', () => docker.getContainer(id).inspect());
      const dir = configDirsOf(c.HostConfig.Binds)[0];
      if (!dir) throw new RuntimeError('container engine: the container mounts no config directory');
      await writeConfig(dir, config);
    },

    async readConfig(id) {
      if (!local) return null;
      const c = await engineCall('inspect', () => docker.getContainer(id).inspect());
      const dir = configDirsOf(c.HostConfig.Binds)[0];
      return dir ? readFile(join(dir, CONFIG_FILE), 'utf8').catch(() => null) : null;
    },

    async pause(id) {
      await engineCall('pause', () => docker.getContainer(id).pause());
    },

    async unpause(id) {
      await engineCall('unpause', () => docker.getContainer(id).unpause());
    },

    async restart(id) {
      if (local) await ensureStateOf(id);
      await ensureNetworkOfContainer(id);
      await engineCall('restart', () =>
        docker
          .getContainer(id)
          .restart({ t: options.stopTimeoutSeconds })
          .catch(async (error) => {
            if (!(await isPaused(id))) throw error;
            await docker.getContainer(id).unpause();
            await docker.getContainer(id).restart({ t: options.stopTimeoutSeconds });
          }),
      );
    },

    async inspect(id) {
      return engineCall('inspect', async () => {
        try {
          const c = await docker.getContainer(id).inspect();
          const binding = c.HostConfig.PortBindings?.[PORT_KEY]?.[0]?.HostPort;
          return {
            id: c.Id,
            agentId: agentIdOf(c.Name),
            userId: c.Config.Labels?.[LABELS.userId] ?? '',
            image: c.Config.Image,
            state: toState(c.State.Status),
            hostPort: binding ? Number(binding) : null,
            startedAt: c.State.Running ? c.State.StartedAt : null,
            lastExit:
              !c.State.Running && c.State.FinishedAt && !c.State.FinishedAt.startsWith('0001')
                ? {
                    startedAt: c.State.StartedAt,
                    finishedAt: c.State.FinishedAt,
                    exitCode: c.State.ExitCode,
                    oomKilled: c.State.OOMKilled,
                  }
                : null,
          };
        } catch (error) {
          if (statusCode(error) === 404) return null;
          throw error;
        }
      });
    },

    async stats(id) {
      return engineCall('stats', async () => {
        try {
          const s = await docker.getContainer(id).stats({ stream: false });
          const cpuDelta = (s.cpu_stats?.cpu_usage?.total_usage ?? 0) - (s.precpu_stats?.cpu_usage?.total_usage ?? 0);
          const systemDelta = (s.cpu_stats?.system_cpu_usage ?? 0) - (s.precpu_stats?.system_cpu_usage ?? 0);
          const cpus = s.cpu_stats?.online_cpus ?? 1;
          const result: ContainerStats = {
            cpuPercent: systemDelta > 0 && cpuDelta > 0 ? Math.round((cpuDelta / systemDelta) * cpus * 10000) / 100 : 0,
            memoryBytes: s.memory_stats?.usage ?? 0,
            memoryLimitBytes: s.memory_stats?.limit ?? 0,
            ...networkOf(s.networks),
          };
          return result;
        } catch (error) {
          if (statusCode(error) === 404) return null;
          throw error;
        }
      });
    },

    async remove(id) {
      const mounted = local
        ? await docker
            .getContainer(id)
            .inspect()
            .then(
              (c) => configDirsOf(c.HostConfig.Binds),
              () => [],
            )
        : [];
      await engineCall('remove', () => docker.getContainer(id).remove({ force: true }).catch(ignoreMissing));
      mountedState.delete(id);
      // A container started warm: its config directory is `warm.<slot>`, its claim `<slot>`.
      const claims = mounted
        .map((dir) => basename(dir))
        .filter((d) => d.startsWith('warm.'))
        .map((d) => join(claimsRoot, d.slice('warm.'.length)));
      await Promise.all([...mounted, ...claims].map((path) => rm(path, { recursive: true, force: true })));
    },

    async list(filter = {}) {
      // By name: a warm container carries no agent label, but is renamed for the agent that claims it.
      const name = [`${AGENT_NAME_PREFIX}${filter.agentId ? `${filter.agentId}-` : ''}`];
      const containers = await engineCall('list', () =>
        docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${options.instance}`], name } }),
      );
      return containers
        .filter((c) => !filter.agentId || agentIdOf(c.Names?.[0]) === filter.agentId)
        .map((c) => info(c, null));
    },

    async removeState(agentId) {
      if (agentNetworks) await engineCall('remove agent network', () => agentNetworks.remove(agentId));
      if (!local) {
        await engineCall('remove state', () =>
          docker.getVolume(stateVolume(options.instance, agentId)).remove({ force: true }).catch(ignoreMissing),
        );
        return;
      }
      // A warm-born agent's state path links to the one its first container was created with.
      const disk = await diskPathOf(stateDirOf(agentId));
      await disks.remove(disk);
      await rm(stateDirOf(agentId), { recursive: true, force: true });
      for (const [id, dir] of mountedState) if (dir === stateDirOf(agentId) || dir === disk) mountedState.delete(id);
      const dirs = await readdir(configRoot).catch(() => [] as string[]);
      await Promise.all(
        dirs
          .filter((d) => d.startsWith(`${agentId}.`))
          .map((d) => rm(join(configRoot, d), { recursive: true, force: true })),
      );
    },

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
    stateDirectory: (agentId) => (local ? { path: stateDirOf(agentId), ownerUid: NODE_UID } : null),

    // A warm container is started before its agent is known, so it could not answer to the agent's name.
    ...(local && !network
      ? {
          warm: createDockerWarmPool({
            docker,
            instance: options.instance,
            configRoot,
            claimsRoot,
            stateDirOf,
            disks,
            mountedState,
            engineCall,
            newConfigDir,
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
