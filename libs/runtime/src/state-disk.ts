import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, open, readdir, readFile, realpath, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { RuntimeError } from './driver.ts';

const run = promisify(execFile);
const COMMAND_TIMEOUT_MS = 30_000;

/**
 * Each agent's state directory as a filesystem of its own: a sparse ext4 image of a fixed size,
 * loop-mounted on the directory. An agent writing without end fills its own filesystem (ENOSPC),
 * never the host's; the image takes host disk only for what was written (and gives it back on
 * delete: mounted with discard). Mounting needs root, as the local container engine does.
 */
export interface StateDisks {
  /**
   * Makes `dir` a mounted filesystem of `bytes` owned by `uid`: creates its image on first use,
   * mounts it again after a host restart, and moves a directory made before disks were bounded
   * into one. Returns whether the filesystem is new.
   */
  ensure(dir: string, bytes: number, uid: number): Promise<boolean>;
  /** Unmounts the filesystem on `dir` and deletes it with its image. */
  remove(dir: string): Promise<void>;
}

const imageOf = (dir: string) => `${dir}.ext4`;

async function command(file: string, args: string[]): Promise<void> {
  try {
    await run(file, args, { timeout: COMMAND_TIMEOUT_MS });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    throw new RuntimeError(`agent state disk: ${file} failed${stderr ? `: ${stderr.split('\n')[0]}` : ''}`, { cause: error });
  }
}

/** Mount points of this mount namespace (octal escapes in /proc's notation decoded). */
async function mountPoints(): Promise<Set<string>> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return new Set(text.split('\n').filter(Boolean).map((line) => line.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))));
}

const exists = (path: string) => stat(path).then(() => true, () => false);

export function createStateDisks(): StateDisks {
  async function makeImage(image: string, bytes: number, uid: number) {
    const file = await open(image, 'wx', 0o600);
    try {
      await file.truncate(bytes);
    } finally {
      await file.close();
    }
    try {
      // No inode tables or journal written ahead (lazy init), no reserved blocks: the image stays sparse.
      await command('mkfs.ext4', ['-q', '-F', '-m', '0', '-E', `root_owner=${uid}:${uid},lazy_itable_init=1,lazy_journal_init=1,nodiscard`, image]);
    } catch (error) {
      await rm(image, { force: true });
      throw error;
    }
  }

  async function mount(image: string, dir: string) {
    await command('mount', ['-o', 'loop,nosuid,nodev,discard', image, dir]);
    await chmod(dir, 0o700);
    await rmdir(join(dir, 'lost+found')).catch(() => undefined);
  }

  return {
    async ensure(dir, bytes, uid) {
      if (process.getuid?.() !== 0) throw new RuntimeError('agent state disk: bounding an agent\'s disk needs root (a loop-mounted filesystem per agent)');
      const real = await realpath(dir).catch(() => dir);
      if ((await mountPoints()).has(real)) return false;
      const image = imageOf(real);
      const fresh = !(await exists(image));
      if (fresh) {
        await mkdir(dirname(real), { recursive: true, mode: 0o711 });
        await makeImage(image, bytes, uid);
        // A state directory made before disks were bounded: its files move into the new filesystem.
        if ((await readdir(real).catch(() => [])).length > 0) {
          const staging = await mkdtemp(`${real}.moving-`);
          try {
            await mount(image, staging);
            await command('cp', ['-a', `${real}/.`, staging]);
          } finally {
            await command('umount', [staging]).catch(() => undefined);
            await rmdir(staging).catch(() => undefined);
          }
          await rm(real, { recursive: true, force: true });
        }
      }
      // Unmounted, the directory is root's and closed: a container started on it can write nothing to the host's disk.
      await mkdir(real, { recursive: true, mode: 0 });
      await chmod(real, 0);
      await mount(image, real);
      return fresh;
    },

    async remove(dir) {
      const real = await realpath(dir).catch(() => dir);
      // Lazily: a container still holding it keeps it until it exits; the host's mount goes now.
      if ((await mountPoints()).has(real)) await command('umount', ['--lazy', real]);
      await rm(real, { recursive: true, force: true });
      await rm(imageOf(real), { force: true });
    },
  };
}
