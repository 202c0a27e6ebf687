import { readFileSync } from 'node:fs';
import { access, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import {
  containerName,
  diskOf,
  ignoreMissing,
  NODE_UID,
  PORT_KEY,
  uniqueSuffix,
  type ContainerDescription,
} from './docker-common.ts';
import type { StateDisks } from './state-disk.ts';
import { writeSecretFiles } from './secret-files.ts';
import {
  AGENT_PORT,
  LABELS,
  RuntimeError,
  type AgentResources,
  type WarmBoot,
  type WarmClass,
  type WarmPool,
} from './driver.ts';

const WARM_LAUNCHER = readFileSync(new URL('./warm-launch.cjs', import.meta.url), 'utf8');

const warmClass = (image: string, resources: AgentResources) =>
  `${image}|${resources.memoryBytes}|${resources.cpus}|${diskOf(resources)}`;

/** What the warm pool uses of the docker driver: its engine, its host directories and how it describes a container. */
export interface DockerWarmPoolHost {
  docker: Docker;
  instance: string;
  configRoot: string;
  /** A file per claimed warm container (`<slot>`, holding the agent id): made exclusively, so one claimer wins. */
  claimsRoot: string;
  stateDirOf(key: string): string;
  disks: StateDisks;
  /** State directories by the container mounting them. */
  mountedState: Map<string, string>;
  engineCall<T>(what: string, call: () => Promise<T>): Promise<T>;
  newConfigDir(key: string, suffix?: string): Promise<string>;
  writeConfig(dir: string, text: string): Promise<void>;
  containerOptions(c: ContainerDescription): Promise<Docker.ContainerCreateOptions>;
  /** Agents' proxy URLs carry a grant of their hosts, fixed in a container's env at its creation. */
  grantsEgress: boolean;
}

/** The image's own command, which a warm container's launcher runs once its agent's config is there. */
async function commandOf(
  docker: Docker,
  engineCall: DockerWarmPoolHost['engineCall'],
  image: string,
): Promise<string[]> {
  const config = (await engineCall('inspect image', () => docker.getImage(image).inspect())).Config;
  const command = [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])];
  if (command.length === 0) throw new RuntimeError(`image ${image} has no command`);
  return command;
}

/**
 * Containers started before any agent needs them, on a local engine. Booted ahead (`boot`), a
 * container's gateway starts with a config of its own and an agent's claim replaces that config,
 * which the gateway hot-reloads; otherwise its launcher waits and the claim starts the gateway.
 */
export function createDockerWarmPool(host: DockerWarmPoolHost): WarmPool {
  const {
    docker,
    engineCall,
    claimsRoot,
    configRoot,
    stateDirOf,
    disks,
    mountedState,
    newConfigDir,
    writeConfig,
    containerOptions,
  } = host;
  const warmPrefix = `agentyard-warm-${host.instance}-`;
  /** A warm container's directories and claim are named after its name's suffix. */
  const slotOf = (name: string) => name.slice(warmPrefix.length);
  const claimFile = (slot: string) => join(claimsRoot, slot);
  /**
   * Waiting containers this process has listed or made, by class: claims take these without
   * asking the engine (a list makes it check every container's state, a rename waits for its
   * database: a burst of claims can afford neither). Other processes on this host claim from the
   * same containers; the claim file decides, and a container another process took costs one
   * failed exclusive create.
   */
  interface Waiting {
    id: string;
    name: string;
    hostPort: number;
    booted: boolean;
  }
  const known = new Map<string, Waiting[]>();
  const remember = (cls: string, waiting: Waiting) => {
    known.set(cls, [...(known.get(cls) ?? []), waiting]);
  };
  const list = () =>
    engineCall('list', () =>
      docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.instance}=${host.instance}`, LABELS.warm], name: [warmPrefix] },
      }),
    );
  const nameOf = (c: { Names?: string[] }) => c.Names?.[0]?.replace(/^\//, '') ?? '';
  const portOf = (c: Docker.ContainerInfo) =>
    c.Ports?.find((p) => p.PrivatePort === AGENT_PORT && p.PublicPort)?.PublicPort ?? 0;
  const waitingOf = (c: Docker.ContainerInfo): Waiting => ({
    id: c.Id,
    name: nameOf(c),
    hostPort: portOf(c),
    booted: c.Labels?.[LABELS.warmBooted] === 'true',
  });
  const claimedAt = (slot: string) =>
    stat(claimFile(slot)).then(
      (s) => s.mtimeMs,
      () => null,
    );
  /** An exclusive create: of everyone taking the slot (claimers, or a top-up removing it), one wins. */
  const takeSlot = (slot: string, taker: string) =>
    writeFile(claimFile(slot), taker, { flag: 'wx', mode: 0o600 }).then(
      () => true,
      (error) => {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      },
    );
  /** Removes a container started warm (by its current name or id) and everything of its slot. */
  const discard = async (container: string, slot: string) => {
    await engineCall('remove', () => docker.getContainer(container).remove({ force: true }).catch(ignoreMissing));
    await disks.remove(stateDirOf(`warm.${slot}`));
    await Promise.all(
      [join(configRoot, `warm.${slot}`), claimFile(slot)].map((path) => rm(path, { recursive: true, force: true })),
    );
  };

  async function addOne(wanted: WarmClass, command: string[], boot?: WarmBoot) {
    const slot = uniqueSuffix();
    const name = `${warmPrefix}${slot}`;
    const state = stateDirOf(`warm.${slot}`);
    await disks.ensure(state, diskOf(wanted.resources), NODE_UID);
    const configDir = await newConfigDir('warm', slot).catch(async (error) => {
      await disks.remove(state);
      throw error;
    });
    const cls = warmClass(wanted.image, wanted.resources);
    try {
      if (boot) await writeConfig(configDir, boot.config);
      const container = await engineCall('create', async () =>
        docker.createContainer(
          await containerOptions({
            name,
            image: wanted.image,
            resources: wanted.resources,
            hostPort: '',
            state,
            configDir,
            labels: {
              [LABELS.managed]: 'true',
              [LABELS.instance]: host.instance,
              [LABELS.warm]: cls,
              ...(boot ? { [LABELS.warmBooted]: 'true' } : {}),
            },
            ...(boot ? {} : { entrypoint: ['node', '-e', WARM_LAUNCHER, JSON.stringify(command)] }),
          }),
        ),
      );
      await engineCall('start', () => container.start());
      const hostPort = Number(
        (await engineCall('inspect', () => container.inspect())).NetworkSettings.Ports?.[PORT_KEY]?.[0]?.HostPort,
      );
      mountedState.set(container.id, state);
      remember(cls, { id: container.id, name, hostPort, booted: boot !== undefined });
      boot?.started(hostPort);
    } catch (error) {
      await discard(name, slot).catch(() => undefined);
      throw error;
    }
  }

  /** Gives a claimed container the agent's name, so the engine lists it as the agent's; fails when it no longer runs. */
  async function nameForAgent(waiting: Waiting, agentId: string) {
    await engineCall('rename', () => docker.getContainer(waiting.id).rename({ name: containerName(agentId) }));
    const c = await engineCall('inspect', () => docker.getContainer(waiting.id).inspect());
    if (!c.State.Running) throw new RuntimeError(`warm container ${waiting.name} had stopped`);
  }

  return {
    async claim(spec) {
      // A warm container's env grants no host: an agent whose channels need some gets a container of its own.
      if (host.grantsEgress && spec.egressHosts?.length) return null;
      // State is only ever mounted at creation: an agent with memory gets a new container that mounts it.
      if (
        await access(stateDirOf(spec.agentId)).then(
          () => true,
          () => false,
        )
      )
        return null;
      const cls = warmClass(spec.image, spec.resources);
      await mkdir(claimsRoot, { recursive: true, mode: 0o700 });
      for (let listed = false; ; ) {
        const candidates = known.get(cls) ?? [];
        if (candidates.length === 0) {
          if (listed) return null;
          // Nothing known here (another process made them, or this one restarted): ask the engine once.
          listed = true;
          const running = (await list()).filter(
            (c) => c.State === 'running' && c.Labels?.[LABELS.warm] === cls && portOf(c),
          );
          known.set(
            cls,
            running.map(waitingOf).sort(() => Math.random() - 0.5),
          );
          continue;
        }
        const waiting = candidates.shift()!; // off the list before any await: no two claims here try the same one
        const slot = slotOf(waiting.name);
        if (!(await takeSlot(slot, spec.agentId))) continue;
        try {
          // The state directory becomes the agent's, then its config starts the gateway (or replaces
          // the booted gateway's own, which it hot-reloads). A link, not a rename: the engine mounts
          // the path it was created with again at every start.
          await symlink(`warm.${slot}`, stateDirOf(spec.agentId));
          await writeSecretFiles(stateDirOf(spec.agentId), spec.secretFiles ?? {}, NODE_UID);
          await writeConfig(join(configRoot, `warm.${slot}`), spec.config);
        } catch {
          // Its directories are gone (removed meanwhile): the next one, then.
          await discard(waiting.id, slot).catch(() => undefined);
          await rm(stateDirOf(spec.agentId), { force: true });
          continue;
        }
        return {
          containerId: waiting.id,
          hostPort: waiting.hostPort,
          booted: waiting.booted,
          named: () => nameForAgent(waiting, spec.agentId),
        };
      }
    },

    async topUp(wanted, beforeEach = async () => {}, boot) {
      const byClass = new Map(
        wanted.map((w) => [warmClass(w.image, w.resources), { wanted: w, kept: [] as Waiting[] }]),
      );
      for (const c of await list()) {
        const name = nameOf(c);
        const claimed = await claimedAt(slotOf(name));
        if (claimed !== null) {
          // Handed to an agent and not yet renamed: its claimer is on it, unless it stopped midway long ago.
          const agentId =
            Date.now() - claimed > 60_000 ? await readFile(claimFile(slotOf(name)), 'utf8').catch(() => '') : '';
          if (agentId) await nameForAgent(waitingOf(c), agentId).catch(() => discard(c.Id, slotOf(name)));
          continue;
        }
        const entry = byClass.get(c.Labels?.[LABELS.warm] ?? '');
        if (entry && c.State === 'running' && portOf(c) && entry.kept.length < entry.wanted.count)
          entry.kept.push(waitingOf(c));
        else if (await takeSlot(slotOf(name), 'top-up')) await discard(c.Id, slotOf(name));
      }
      known.clear();
      for (const [cls, { kept }] of byClass)
        known.set(
          cls,
          kept.sort(() => Math.random() - 0.5),
        );
      for (const { wanted: w, kept } of byClass.values()) {
        if (kept.length >= w.count) continue;
        const command = boot ? [] : await commandOf(docker, engineCall, w.image);
        for (let i = kept.length; i < w.count; i++) {
          await beforeEach();
          await addOne(w, command, boot?.());
        }
      }
    },

    async waiting() {
      let count = 0;
      for (const c of await list()) if (c.State === 'running' && (await claimedAt(slotOf(nameOf(c)))) === null) count++;
      return count;
    },

    async drain() {
      known.clear();
      for (const c of await list())
        if (await takeSlot(slotOf(nameOf(c)), 'drain')) await discard(c.Id, slotOf(nameOf(c)));
    },
  };
}
