import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_STATE_DISK_BYTES, ignoreMissing, NODE_UID } from '../docker-common.ts';
import { STATE_DIR } from './container-spec.ts';
import { type Engine, engineCall, stateVolume } from './engine.ts';
import { diskPathOf, stateDirOf } from './host-directories.ts';

/** An agent's state and network: its disk mounted before its container starts, all of it removed on request. */

/** The state directory a container mounts (from the engine), mounted again if the host restarted since. */
export async function ensureStateOf(e: Engine, id: string): Promise<void> {
  if (e.mountedState.has(id)) return;
  const c = await engineCall('inspect', () => e.docker.getContainer(id).inspect());
  const state = (c.HostConfig.Binds ?? []).map((b) => b.split(':')).find(([, inside]) => inside === STATE_DIR)?.[0];
  if (state?.startsWith(`${e.dirs.stateRoot}/`))
    await e.disks.ensure(await diskPathOf(state), DEFAULT_STATE_DISK_BYTES, NODE_UID);
  e.mountedState.set(id, state ?? '');
}

/** Its own network made and every peer on it (a peer recreated since lost it): before a create or start. */
export async function ensureAgentNetwork(e: Engine, agentId: string): Promise<void> {
  const networks = e.agentNetworks;
  if (networks && agentId) await engineCall('agent network', () => networks.ensure(agentId));
}

/** Removes the agent's network, and its state: its disk and config directories, or its engine volume. */
export async function removeAgentState(e: Engine, agentId: string): Promise<void> {
  const networks = e.agentNetworks;
  if (networks) await engineCall('remove agent network', () => networks.remove(agentId));
  if (!e.local) {
    await engineCall('remove state', () =>
      e.docker.getVolume(stateVolume(e.options.instance, agentId)).remove({ force: true }).catch(ignoreMissing),
    );
    return;
  }
  // A warm-born agent's state path links to the one its first container was created with.
  const state = stateDirOf(e.dirs, agentId);
  const disk = await diskPathOf(state);
  await e.disks.remove(disk);
  await rm(state, { recursive: true, force: true });
  for (const [id, dir] of e.mountedState) if (dir === state || dir === disk) e.mountedState.delete(id);
  const dirs = await readdir(e.dirs.configRoot).catch(() => [] as string[]);
  await Promise.all(
    dirs
      .filter((d) => d.startsWith(`${agentId}.`))
      .map((d) => rm(join(e.dirs.configRoot, d), { recursive: true, force: true })),
  );
}
