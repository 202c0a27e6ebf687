import { chown, mkdir, readlink, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { NODE_UID, uniqueSuffix } from '../docker-common.ts';

/** The file a container's config directory holds; OPENCLAW_CONFIG_PATH names it. */
export const CONFIG_FILE = 'openclaw.json';

/** On a local engine: the host directories the engine bind-mounts (configs, state) and the warm pool's claims. */
export interface HostDirectories {
  configRoot: string;
  stateRoot: string;
  /** A file per claimed warm container (`<slot>`, holding the agent id): made exclusively, so one claimer wins. */
  claimsRoot: string;
}

export const hostDirectoriesOf = (configDir: string, instance: string): HostDirectories => ({
  configRoot: join(configDir, instance, 'config'),
  stateRoot: join(configDir, instance, 'state'),
  claimsRoot: join(configDir, instance, 'warm-claims'),
});

/** An agent's state path (`<agentId>`), or a warm container's (`warm.<slot>`). */
export const stateDirOf = (dirs: HostDirectories, key: string) => join(dirs.stateRoot, key);

/** The state path whose disk `path` uses: a warm-born agent's path links to its first container's (`warm.<slot>`). */
export async function diskPathOf(path: string): Promise<string> {
  const target = await readlink(path).catch(() => null);
  return target && !target.startsWith('/') ? join(dirname(path), target) : path;
}

// The gateway runs as uid 1000 in the image: it owns its directories (each holds only its own agent's files).
async function ownDirectory(dir: string, mode: number) {
  await mkdir(dir, { recursive: true, mode });
  await chown(dir, NODE_UID, NODE_UID).catch(() => undefined);
}

/** A config directory per container (`<key>.<suffix>`): a container kept for rollback keeps the config it was created with. */
export async function newConfigDir(dirs: HostDirectories, key: string, suffix = uniqueSuffix()): Promise<string> {
  await mkdir(dirs.configRoot, { recursive: true, mode: 0o711 });
  const dir = join(dirs.configRoot, `${key}.${suffix}`);
  await ownDirectory(dir, 0o500);
  return dir;
}

/** Written under another name and renamed into place: a waiting launcher never reads half a file. */
export async function writeConfig(dir: string, text: string): Promise<void> {
  const partial = join(dir, `.${CONFIG_FILE}.partial`);
  await writeFile(partial, text, { mode: 0o600 });
  await chown(partial, NODE_UID, NODE_UID).catch(() => undefined);
  await rename(partial, join(dir, CONFIG_FILE));
}

/** Host directories a container mounts from this platform's config root (to remove with it). */
export const configDirsOf = (dirs: HostDirectories, binds: string[] | undefined) =>
  (binds ?? []).map((b) => b.split(':')[0]!).filter((p) => p.startsWith(`${dirs.configRoot}/`));
