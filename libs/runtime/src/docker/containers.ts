import { readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type Docker from 'dockerode';
import { pack } from 'tar-stream';
import {
  AGENT_NAME_PREFIX,
  type ContainerDescription,
  containerName,
  diskOf,
  ignoreMissing,
  NODE_UID,
  PORT_KEY,
  statusCode,
} from '../docker-common.ts';
import {
  AGENT_PORT,
  type AgentContainerSpec,
  type ContainerInfo,
  type ContainerStats,
  LABELS,
  RuntimeError,
} from '../driver.ts';
import { AGENT_SECRETS_DIR, writeSecretFiles } from '../secret-files.ts';
import { ensureAgentNetwork, ensureStateOf } from './agent-state.ts';
import { STATE_DIR } from './container-spec.ts';
import { agentIdOf, type Engine, engineCall, ignoreNotModified, isPaused, stateVolume, toState } from './engine.ts';
import { CONFIG_FILE, configDirsOf, diskPathOf, newConfigDir, stateDirOf, writeConfig } from './host-directories.ts';

/** An agent's containers through their lifecycle, and what the engine says of them. */

/** How the driver makes an agent container's create options (its egress checked, its network made). */
export type ContainerOptions = (c: ContainerDescription) => Promise<Docker.ContainerCreateOptions>;

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

/** The agent's container on its state (a host folder with its config beside it, or an engine volume); its id. */
export async function createContainer(
  e: Engine,
  containerOptions: ContainerOptions,
  spec: AgentContainerSpec,
): Promise<string> {
  const labels = {
    [LABELS.managed]: 'true',
    [LABELS.instance]: e.options.instance,
    [LABELS.agentId]: spec.agentId,
    [LABELS.userId]: spec.userId,
  };
  const createOn = (state: string, configDir?: string) =>
    engineCall('create', async () =>
      e.docker.createContainer(
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
  if (e.local) {
    const state = stateDirOf(e.dirs, spec.agentId);
    const disk = await diskPathOf(state);
    const fresh = await e.disks.ensure(disk, diskOf(spec.resources), NODE_UID);
    try {
      await writeSecretFiles(state, spec.secretFiles ?? {}, NODE_UID);
      const configDir = await newConfigDir(e.dirs, spec.agentId);
      await writeConfig(configDir, spec.config);
      const container = await createOn(state, configDir);
      e.mountedState.set(container.id, state);
      return container.id;
    } catch (error) {
      // A disk made for a container that never came to be holds nothing yet: it goes too.
      if (fresh) await e.disks.remove(disk).catch(() => undefined);
      throw error;
    }
  }
  // The state volume is created by the engine on first use.
  const container = await createOn(stateVolume(e.options.instance, spec.agentId));
  try {
    await engineCall('write config', async () =>
      container.putArchive(await tarOf(CONFIG_FILE, spec.config, spec.secretFiles), { path: STATE_DIR }),
    );
  } catch (error) {
    await container.remove({ force: true }).catch(() => undefined);
    throw error;
  }
  return container.id;
}

/** Its state mounted and its network there (local engine, shared network): what a start or restart needs first. */
async function prepareToRun(e: Engine, id: string) {
  if (e.local) await ensureStateOf(e, id);
  if (e.agentNetworks)
    await ensureAgentNetwork(
      e,
      agentIdOf((await engineCall('inspect', () => e.docker.getContainer(id).inspect())).Name),
    );
}

export async function startContainer(e: Engine, id: string): Promise<void> {
  await prepareToRun(e, id);
  await engineCall('start', () =>
    e.docker
      .getContainer(id)
      .start()
      .catch(ignoreNotModified)
      // A paused container (a hibernating agent) is started by resuming it: the engine refuses to start it.
      .catch(async (error) => {
        if (!(await isPaused(e.docker, id))) throw error;
        await e.docker.getContainer(id).unpause();
      }),
  );
}

export async function stopContainer(e: Engine, id: string): Promise<void> {
  const t = e.options.stopTimeoutSeconds;
  await engineCall('stop', () =>
    e.docker
      .getContainer(id)
      .stop({ t })
      .catch(ignoreNotModified)
      .catch(ignoreMissing)
      // Podman refuses to stop a paused container: it is resumed, then stopped.
      .catch(async (error) => {
        if (!(await isPaused(e.docker, id))) throw error;
        await e.docker.getContainer(id).unpause();
        await e.docker.getContainer(id).stop({ t }).catch(ignoreNotModified);
      }),
  );
}

export async function restartContainer(e: Engine, id: string): Promise<void> {
  const t = e.options.stopTimeoutSeconds;
  await prepareToRun(e, id);
  await engineCall('restart', () =>
    e.docker
      .getContainer(id)
      .restart({ t })
      .catch(async (error) => {
        if (!(await isPaused(e.docker, id))) throw error;
        await e.docker.getContainer(id).unpause();
        await e.docker.getContainer(id).restart({ t });
      }),
  );
}

export async function replaceContainerConfig(e: Engine, id: string, config: string): Promise<void> {
  // A remote engine's config was copied in with the container (readConfig answers null there): its agents are rebuilt instead.
  if (!e.local)
    throw new RuntimeError('container engine: a config copied through the engine API is not replaced in place');
  const c = await engineCall('inspect', () => e.docker.getContainer(id).inspect());
  const dir = configDirsOf(e.dirs, c.HostConfig.Binds)[0];
  if (!dir) throw new RuntimeError('container engine: the container mounts no config directory');
  await writeConfig(dir, config);
}

export async function readContainerConfig(e: Engine, id: string): Promise<string | null> {
  if (!e.local) return null;
  const c = await engineCall('inspect', () => e.docker.getContainer(id).inspect());
  const dir = configDirsOf(e.dirs, c.HostConfig.Binds)[0];
  return dir ? readFile(join(dir, CONFIG_FILE), 'utf8').catch(() => null) : null;
}

export function inspectContainer(e: Engine, id: string): Promise<ContainerInfo | null> {
  return engineCall('inspect', async () => {
    try {
      const c = await e.docker.getContainer(id).inspect();
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
}

export function containerStats(e: Engine, id: string): Promise<ContainerStats | null> {
  return engineCall('stats', async () => {
    try {
      const s = await e.docker.getContainer(id).stats({ stream: false });
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
}

/** Removes the container and the config directories it mounted (and a warm one's claim). */
export async function removeContainer(e: Engine, id: string): Promise<void> {
  const mounted = e.local
    ? await e.docker
        .getContainer(id)
        .inspect()
        .then(
          (c) => configDirsOf(e.dirs, c.HostConfig.Binds),
          () => [],
        )
    : [];
  await engineCall('remove', () => e.docker.getContainer(id).remove({ force: true }).catch(ignoreMissing));
  e.mountedState.delete(id);
  // A container started warm: its config directory is `warm.<slot>`, its claim `<slot>`.
  const claims = mounted
    .map((dir) => basename(dir))
    .filter((d) => d.startsWith('warm.'))
    .map((d) => join(e.dirs.claimsRoot, d.slice('warm.'.length)));
  await Promise.all([...mounted, ...claims].map((path) => rm(path, { recursive: true, force: true })));
}

export async function listContainers(e: Engine, filter: { agentId?: string }): Promise<ContainerInfo[]> {
  // By name: a warm container carries no agent label, but is renamed for the agent that claims it.
  const name = [`${AGENT_NAME_PREFIX}${filter.agentId ? `${filter.agentId}-` : ''}`];
  const containers = await engineCall('list', () =>
    e.docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${e.options.instance}`], name } }),
  );
  return containers
    .filter((c) => !filter.agentId || agentIdOf(c.Names?.[0]) === filter.agentId)
    .map((c) => ({
      id: c.Id,
      agentId: agentIdOf(c.Names?.[0]),
      userId: c.Labels?.[LABELS.userId] ?? '',
      image: c.Image,
      state: toState(c.State),
      hostPort: c.Ports?.find((p) => p.PrivatePort === AGENT_PORT && p.PublicPort)?.PublicPort ?? null,
      startedAt: null,
    }));
}
