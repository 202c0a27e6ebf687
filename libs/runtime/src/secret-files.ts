import { chown, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where an agent's secret files live, relative to its state directory (~/.openclaw): under
 * `credentials/`, which snapshots leave out and a restore keeps (agent-snapshot.ts), and which no
 * config backup reads. The platform owns this folder: it is written anew for every container.
 */
export const AGENT_SECRETS_DIR = 'credentials/agentyard';

/** The path an agent's config names a secret file by (`~` is the gateway's HOME, whichever driver runs it). */
export const agentSecretFilePath = (name: string) => `~/.openclaw/${AGENT_SECRETS_DIR}/${name}`;

const SAFE_NAME = /^[a-z0-9][a-z0-9.-]{0,63}$/;

/**
 * Replaces the agent's secret files under `stateDir` with `files` (name → content): each 0600 in a
 * 0700 folder, owned by `uid` when given; a file no longer named (a disconnected channel) is gone.
 */
export async function writeSecretFiles(stateDir: string, files: Record<string, string>, uid?: number): Promise<void> {
  for (const name of Object.keys(files)) if (!SAFE_NAME.test(name)) throw new Error(`not a secret file name: ${name}`);
  const dir = join(stateDir, AGENT_SECRETS_DIR);
  const own = async (path: string) => {
    if (uid !== undefined) await chown(path, uid, uid);
  };
  await mkdir(join(stateDir, 'credentials'), { recursive: true, mode: 0o700 });
  await own(join(stateDir, 'credentials'));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await own(dir);
  for (const name of await readdir(dir))
    if (!Object.hasOwn(files, name)) await rm(join(dir, name), { recursive: true, force: true });
  for (const [name, content] of Object.entries(files)) {
    // Written under another name and renamed: the gateway never reads half a token.
    const partial = join(dir, `.${name}.partial`);
    await writeFile(partial, content, { mode: 0o600 });
    await own(partial);
    await rename(partial, join(dir, name));
  }
}
