import { chown, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Docker from 'dockerode';
import { pack } from 'tar-stream';
import { AGENT_PORT, LABELS, RuntimeError, type AgentContainerSpec, type ContainerInfo, type ContainerState, type ContainerStats, type RuntimeDriver } from './driver.ts';

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
   * A host directory the engine can bind-mount from (a local engine): each agent's config file is
   * written there and mounted read-only. '' copies it into the container through the engine API
   * instead (remote engines), which costs an engine call per container.
   */
  configDir: string;
}

const STATE_DIR = '/home/node/.openclaw';
const NODE_UID = 1000;
const PORT_KEY = `${AGENT_PORT}/tcp`;

const containerName = (agentId: string) => `agentyard-agent-${agentId}`;
const stateVolume = (instance: string, agentId: string) => `agentyard-${instance}-state-${agentId}`.replace(/[^a-zA-Z0-9_.-]/g, '-');

function engineOptions(dockerHost: string, timeoutMs: number): Docker.DockerOptions {
  if (dockerHost.startsWith('unix://')) return { socketPath: dockerHost.slice('unix://'.length), timeout: timeoutMs };
  if (dockerHost.startsWith('/')) return { socketPath: dockerHost, timeout: timeoutMs };
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return { host: url.hostname, port: Number(url.port || 2375), protocol: url.protocol === 'https:' ? 'https' : 'http', timeout: timeoutMs };
}

const statusCode = (error: unknown) => (error as { statusCode?: number }).statusCode;
const ignoreMissing = (error: unknown) => { if (statusCode(error) !== 404) throw error; };
/** 304: already started / already stopped. */
const ignoreNotModified = (error: unknown) => { if (statusCode(error) !== 304) throw error; };

function toState(status: string | undefined): ContainerState {
  switch (status) {
    case 'running': return 'running';
    case 'created': case 'configured': return 'created';
    case 'paused': return 'paused';
    case 'restarting': return 'restarting';
    case 'dead': return 'dead';
    default: return 'stopped';
  }
}

async function tarOf(name: string, text: string): Promise<Buffer> {
  const archive = pack();
  archive.entry({ name, mode: 0o600, uid: NODE_UID, gid: NODE_UID }, text);
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Agents as hardened containers on Docker Engine or Podman's Docker-compatible API. */
export function createDockerDriver(options: DockerDriverOptions): RuntimeDriver {
  const docker = new Docker(engineOptions(options.dockerHost, options.timeoutMs));
  let hostCpus: Promise<number> | undefined;
  let engineVersion: Promise<{ engine: string; version: string }> | undefined;
  const configDirOf = () => join(options.configDir, options.instance);
  // One file per container: a container kept for rollback keeps the config it was created with.
  const writeConfigFile = async (agentId: string, text: string) => {
    const file = join(configDirOf(), `${agentId}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.json`);
    await mkdir(join(options.configDir, options.instance), { recursive: true, mode: 0o711 });
    await writeFile(file, text, { mode: 0o600 });
    // The gateway runs as uid 1000 in the image; the file holds the agent's own tokens only.
    await chown(file, NODE_UID, NODE_UID).catch(() => undefined);
    return file;
  };
  const cpuLimit = async (wanted: number) => {
    hostCpus ??= docker.info().then((info: { NCPU?: number }) => info.NCPU ?? wanted, () => wanted);
    return Math.min(wanted, await hostCpus);
  };

  const engineCall = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      const message = (error as Error).message ?? '';
      const portInUse = /address already in use|port is already allocated|bind/i.test(message);
      throw new RuntimeError(`container engine: ${what} failed${statusCode(error) ? ` (${statusCode(error)})` : ''}`, { cause: error, portInUse });
    }
  };

  const info = (c: { Id: string; Labels?: Record<string, string>; Image: string; State: string; Ports?: Docker.Port[] }, startedAt: string | null): ContainerInfo => ({
    id: c.Id,
    agentId: c.Labels?.[LABELS.agentId] ?? '',
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
      return engineVersion.catch((error) => { engineVersion = undefined; throw error; });
    },

    async create(spec: AgentContainerSpec) {
      const volume = stateVolume(options.instance, spec.agentId);
      const labels = { [LABELS.managed]: 'true', [LABELS.instance]: options.instance, [LABELS.agentId]: spec.agentId, [LABELS.userId]: spec.userId };
      const mountedConfig = options.configDir ? await writeConfigFile(spec.agentId, spec.config) : null;
      const container = await engineCall('create', async () => {
        return docker.createContainer({
          name: `${containerName(spec.agentId)}-${Date.now().toString(36)}`,
          Image: spec.image,
          Labels: labels,
          // Nothing of the platform's environment: the agent gets only its config file.
          Env: [],
          ExposedPorts: { [PORT_KEY]: {} },
          StopTimeout: options.stopTimeoutSeconds,
          HostConfig: {
            PortBindings: { [PORT_KEY]: [{ HostIp: options.publishHost, HostPort: String(spec.hostPort) }] },
            // The state volume is created by the engine on first use.
            Binds: [`${volume}:${STATE_DIR}`, ...(mountedConfig ? [`${mountedConfig}:${STATE_DIR}/openclaw.json:ro`] : [])],
            CapDrop: ['ALL'],
            SecurityOpt: ['no-new-privileges'],
            Init: true,
            PidsLimit: options.pidsLimit,
            Memory: spec.resources.memoryBytes,
            NanoCpus: Math.round((await cpuLimit(spec.resources.cpus)) * 1e9),
            RestartPolicy: { Name: 'no' },
            ...(options.networkMode ? { NetworkMode: options.networkMode } : {}),
          },
        });
      });
      if (mountedConfig) return container.id;
      try {
        await engineCall('write config', async () => container.putArchive(await tarOf('openclaw.json', spec.config), { path: STATE_DIR }));
      } catch (error) {
        await container.remove({ force: true }).catch(() => undefined);
        throw error;
      }
      return container.id;
    },

    async start(id) {
      await engineCall('start', () => docker.getContainer(id).start().catch(ignoreNotModified));
    },

    async stop(id) {
      await engineCall('stop', () => docker.getContainer(id).stop({ t: options.stopTimeoutSeconds }).catch(ignoreNotModified).catch(ignoreMissing));
    },

    async restart(id) {
      await engineCall('restart', () => docker.getContainer(id).restart({ t: options.stopTimeoutSeconds }));
    },

    async inspect(id) {
      return engineCall('inspect', async () => {
        try {
          const c = await docker.getContainer(id).inspect();
          const binding = c.HostConfig.PortBindings?.[PORT_KEY]?.[0]?.HostPort;
          return {
            id: c.Id,
            agentId: c.Config.Labels?.[LABELS.agentId] ?? '',
            userId: c.Config.Labels?.[LABELS.userId] ?? '',
            image: c.Config.Image,
            state: toState(c.State.Status),
            hostPort: binding ? Number(binding) : null,
            startedAt: c.State.Running ? c.State.StartedAt : null,
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
          };
          return result;
        } catch (error) {
          if (statusCode(error) === 404) return null;
          throw error;
        }
      });
    },

    async remove(id) {
      const mounted = options.configDir
        ? await docker.getContainer(id).inspect().then((c) => (c.HostConfig.Binds ?? []).map((b) => b.split(':')[0]!).filter((p) => p.startsWith(configDirOf())), () => [])
        : [];
      await engineCall('remove', () => docker.getContainer(id).remove({ force: true }).catch(ignoreMissing));
      await Promise.all(mounted.map((file) => rm(file, { force: true })));
    },

    async list(filter = {}) {
      const label = [`${LABELS.instance}=${options.instance}`];
      if (filter.agentId) label.push(`${LABELS.agentId}=${filter.agentId}`);
      const containers = await engineCall('list', () => docker.listContainers({ all: true, filters: { label } }));
      return containers.map((c) => info(c, null));
    },

    async removeState(agentId) {
      await engineCall('remove state', () => docker.getVolume(stateVolume(options.instance, agentId)).remove({ force: true }).catch(ignoreMissing));
      if (options.configDir) {
        const files = await readdir(configDirOf()).catch(() => [] as string[]);
        await Promise.all(files.filter((f) => f.startsWith(`${agentId}.`)).map((f) => rm(join(configDirOf(), f), { force: true })));
      }
    },

    gatewayUrl(hostPort) {
      return `http://${options.publishHost === '0.0.0.0' ? '127.0.0.1' : options.publishHost}:${hostPort}`;
    },

    async close() {},
  };
}
