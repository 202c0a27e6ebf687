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
  type AgentContainerSpec,
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

/** A container waiting warm, as this process knows it. */
interface Waiting {
  id: string;
  name: string;
  hostPort: number;
  booted: boolean;
}

/** The pool's host, its containers' name prefix, and the waiting containers it knows of. */
interface Pool {
  host: DockerWarmPoolHost;
  /** Every warm container's name: `<prefix><slot>`; its directories and claim are named after the slot. */
  prefix: string;
  /**
   * Waiting containers this process has listed or made, by class: claims take these without
   * asking the engine (a list makes it check every container's state, a rename waits for its
   * database: a burst of claims can afford neither). Other processes on this host claim from the
   * same containers; the claim file decides, and a container another process took costs one
   * failed exclusive create.
   */
  known: Map<string, Waiting[]>;
}

const slotOf = (pool: Pool, name: string) => name.slice(pool.prefix.length);
const claimFile = (pool: Pool, slot: string) => join(pool.host.claimsRoot, slot);
const nameOf = (c: { Names?: string[] }) => c.Names?.[0]?.replace(/^\//, '') ?? '';
const portOf = (c: Docker.ContainerInfo) =>
  c.Ports?.find((p) => p.PrivatePort === AGENT_PORT && p.PublicPort)?.PublicPort ?? 0;
const waitingOf = (c: Docker.ContainerInfo): Waiting => ({
  id: c.Id,
  name: nameOf(c),
  hostPort: portOf(c),
  booted: c.Labels?.[LABELS.warmBooted] === 'true',
});
/** In no particular order: claimers in several processes rarely reach for the same container first. */
const shuffled = <T>(items: T[]) => items.sort(() => Math.random() - 0.5);

const remember = (pool: Pool, cls: string, waiting: Waiting) => {
  pool.known.set(cls, [...(pool.known.get(cls) ?? []), waiting]);
};

/** Every warm container of this instance, waiting or claimed, running or not. */
const list = ({ host, prefix }: Pool) =>
  host.engineCall('list', () =>
    host.docker.listContainers({
      all: true,
      filters: { label: [`${LABELS.instance}=${host.instance}`, LABELS.warm], name: [prefix] },
    }),
  );

const claimedAt = (pool: Pool, slot: string) =>
  stat(claimFile(pool, slot)).then(
    (s) => s.mtimeMs,
    () => null,
  );

/** An exclusive create: of everyone taking the slot (claimers, or a top-up removing it), one wins. */
const takeSlot = (pool: Pool, slot: string, taker: string) =>
  writeFile(claimFile(pool, slot), taker, { flag: 'wx', mode: 0o600 }).then(
    () => true,
    (error) => {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    },
  );

/** Removes a container started warm (by its current name or id) and everything of its slot. */
async function discard(pool: Pool, container: string, slot: string) {
  const { host } = pool;
  await host.engineCall('remove', () =>
    host.docker.getContainer(container).remove({ force: true }).catch(ignoreMissing),
  );
  await host.disks.remove(host.stateDirOf(`warm.${slot}`));
  await Promise.all(
    [join(host.configRoot, `warm.${slot}`), claimFile(pool, slot)].map((path) =>
      rm(path, { recursive: true, force: true }),
    ),
  );
}

/** Makes and starts one warm container of the class, booted with `boot`'s config or waiting in its launcher. */
async function addOne(pool: Pool, wanted: WarmClass, command: string[], boot?: WarmBoot) {
  const { host } = pool;
  const slot = uniqueSuffix();
  const name = `${pool.prefix}${slot}`;
  const state = host.stateDirOf(`warm.${slot}`);
  await host.disks.ensure(state, diskOf(wanted.resources), NODE_UID);
  const configDir = await host.newConfigDir('warm', slot).catch(async (error) => {
    await host.disks.remove(state);
    throw error;
  });
  const cls = warmClass(wanted.image, wanted.resources);
  try {
    if (boot) await host.writeConfig(configDir, boot.config);
    const container = await host.engineCall('create', async () =>
      host.docker.createContainer(
        await host.containerOptions({
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
    await host.engineCall('start', () => container.start());
    const hostPort = Number(
      (await host.engineCall('inspect', () => container.inspect())).NetworkSettings.Ports?.[PORT_KEY]?.[0]?.HostPort,
    );
    host.mountedState.set(container.id, state);
    remember(pool, cls, { id: container.id, name, hostPort, booted: boot !== undefined });
    boot?.started(hostPort);
  } catch (error) {
    await discard(pool, name, slot).catch(() => undefined);
    throw error;
  }
}

/** Gives a claimed container the agent's name, so the engine lists it as the agent's; fails when it no longer runs. */
async function nameForAgent({ host }: Pool, waiting: Waiting, agentId: string) {
  await host.engineCall('rename', () => host.docker.getContainer(waiting.id).rename({ name: containerName(agentId) }));
  const c = await host.engineCall('inspect', () => host.docker.getContainer(waiting.id).inspect());
  if (!c.State.Running) throw new RuntimeError(`warm container ${waiting.name} had stopped`);
}

/** The next waiting container of the class this process knows of; asks the engine once when it knows of none. */
async function nextCandidate(pool: Pool, cls: string, listed: { done: boolean }): Promise<Waiting | null> {
  for (;;) {
    const candidates = pool.known.get(cls) ?? [];
    // Off the list before any await: no two claims here try the same one.
    if (candidates.length > 0) return candidates.shift()!;
    if (listed.done) return null;
    // Nothing known here (another process made them, or this one restarted): ask the engine once.
    listed.done = true;
    const running = (await list(pool)).filter(
      (c) => c.State === 'running' && c.Labels?.[LABELS.warm] === cls && portOf(c),
    );
    pool.known.set(cls, shuffled(running.map(waitingOf)));
  }
}

async function claim(pool: Pool, spec: Omit<AgentContainerSpec, 'hostPort'>) {
  const { host } = pool;
  // A warm container's env grants no host: an agent whose channels need some gets a container of its own.
  if (host.grantsEgress && spec.egressHosts?.length) return null;
  // State is only ever mounted at creation: an agent with memory gets a new container that mounts it.
  if (
    await access(host.stateDirOf(spec.agentId)).then(
      () => true,
      () => false,
    )
  )
    return null;
  const cls = warmClass(spec.image, spec.resources);
  await mkdir(host.claimsRoot, { recursive: true, mode: 0o700 });
  const listed = { done: false };
  for (;;) {
    const waiting = await nextCandidate(pool, cls, listed);
    if (!waiting) return null;
    const slot = slotOf(pool, waiting.name);
    if (!(await takeSlot(pool, slot, spec.agentId))) continue;
    try {
      // The state directory becomes the agent's, then its config starts the gateway (or replaces
      // the booted gateway's own, which it hot-reloads). A link, not a rename: the engine mounts
      // the path it was created with again at every start.
      await symlink(`warm.${slot}`, host.stateDirOf(spec.agentId));
      await writeSecretFiles(host.stateDirOf(spec.agentId), spec.secretFiles ?? {}, NODE_UID);
      await host.writeConfig(join(host.configRoot, `warm.${slot}`), spec.config);
    } catch {
      // Its directories are gone (removed meanwhile): the next one, then.
      await discard(pool, waiting.id, slot).catch(() => undefined);
      await rm(host.stateDirOf(spec.agentId), { force: true });
      continue;
    }
    return {
      containerId: waiting.id,
      hostPort: waiting.hostPort,
      booted: waiting.booted,
      named: () => nameForAgent(pool, waiting, spec.agentId),
    };
  }
}

/**
 * Sorts the engine's warm containers: up to `count` running ones of each wanted class are kept
 * (and become what this process knows waits); the rest are removed, and a claimed one whose
 * claimer stopped midway is named for its agent (or removed when it no longer runs).
 */
async function keepWanted(pool: Pool, wanted: WarmClass[]) {
  const byClass = new Map(wanted.map((w) => [warmClass(w.image, w.resources), { wanted: w, kept: [] as Waiting[] }]));
  for (const c of await list(pool)) {
    const slot = slotOf(pool, nameOf(c));
    const claimed = await claimedAt(pool, slot);
    if (claimed !== null) {
      // Handed to an agent and not yet renamed: its claimer is on it, unless it stopped midway long ago.
      const agentId =
        Date.now() - claimed > 60_000 ? await readFile(claimFile(pool, slot), 'utf8').catch(() => '') : '';
      if (agentId) await nameForAgent(pool, waitingOf(c), agentId).catch(() => discard(pool, c.Id, slot));
      continue;
    }
    const entry = byClass.get(c.Labels?.[LABELS.warm] ?? '');
    if (entry && c.State === 'running' && portOf(c) && entry.kept.length < entry.wanted.count)
      entry.kept.push(waitingOf(c));
    else if (await takeSlot(pool, slot, 'top-up')) await discard(pool, c.Id, slot);
  }
  pool.known.clear();
  for (const [cls, { kept }] of byClass) pool.known.set(cls, shuffled(kept));
  return [...byClass.values()];
}

async function topUp(pool: Pool, wanted: WarmClass[], beforeEach: () => Promise<void>, boot?: () => WarmBoot) {
  for (const { wanted: w, kept } of await keepWanted(pool, wanted)) {
    if (kept.length >= w.count) continue;
    const command = boot ? [] : await commandOf(pool.host.docker, pool.host.engineCall, w.image);
    for (let i = kept.length; i < w.count; i++) {
      await beforeEach();
      await addOne(pool, w, command, boot?.());
    }
  }
}

/**
 * Containers started before any agent needs them, on a local engine. Booted ahead (`boot`), a
 * container's gateway starts with a config of its own and an agent's claim replaces that config,
 * which the gateway hot-reloads; otherwise its launcher waits and the claim starts the gateway.
 */
export function createDockerWarmPool(host: DockerWarmPoolHost): WarmPool {
  const pool: Pool = { host, prefix: `agentyard-warm-${host.instance}-`, known: new Map() };
  return {
    claim: (spec) => claim(pool, spec),
    topUp: (wanted, beforeEach = async () => {}, boot) => topUp(pool, wanted, beforeEach, boot),
    async waiting() {
      let count = 0;
      for (const c of await list(pool))
        if (c.State === 'running' && (await claimedAt(pool, slotOf(pool, nameOf(c)))) === null) count++;
      return count;
    },
    async drain() {
      pool.known.clear();
      for (const c of await list(pool))
        if (await takeSlot(pool, slotOf(pool, nameOf(c)), 'drain')) await discard(pool, c.Id, slotOf(pool, nameOf(c)));
    },
  };
}
