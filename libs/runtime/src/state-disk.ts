import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, open, readFile, rename, rm, rmdir, symlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { RuntimeError } from './driver.ts';

const run = promisify(execFile);
const COMMAND_TIMEOUT_MS = 30_000;
/**
 * Where the filesystems are mounted: outside the platform's state tree, which then holds only a
 * link and the image, so removing that tree (as a test or benchmark does) never meets a busy mount.
 */
const MOUNT_ROOT = '/run/agentyard-state-disks';

/**
 * Each agent's state as a filesystem of its own: a sparse ext4 image of a fixed size, loop-mounted,
 * which the agent's state path links to. An agent writing without end fills its own filesystem
 * (ENOSPC), never the host's; the image takes host disk only for what was written (and gives it
 * back on delete: mounted with discard). Mounting needs root, as the local container engine does.
 */
export interface StateDisks {
  /**
   * Makes `path` (a path in the state tree) lead to a mounted filesystem of `bytes` owned by `uid`:
   * creates its image on first use, mounts it again after a host restart, and moves a directory
   * made before disks were bounded into one. Returns whether the filesystem is new.
   */
  ensure(path: string, bytes: number, uid: number): Promise<boolean>;
  /** Unmounts the filesystem `path` leads to and deletes it, its image and the link. */
  remove(path: string): Promise<void>;
}

const imageOf = (path: string) => `${path}.ext4`;
/** The mount point of the image made for `path` (by its location: unique on this host). */
const mountPointOf = (path: string) =>
  join(MOUNT_ROOT, `${basename(path).slice(0, 40)}-${createHash('sha256').update(path).digest('hex').slice(0, 16)}`);

async function command(file: string, args: string[]): Promise<void> {
  try {
    await run(file, args, { timeout: COMMAND_TIMEOUT_MS });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    throw new RuntimeError(`agent state disk: ${file} failed${stderr ? `: ${stderr.split('\n')[0]}` : ''}`, {
      cause: error,
    });
  }
}

const unescapeMountPath = (field: string) =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/** Mounts of this mount namespace: mount point → source. */
async function mounts(): Promise<Map<string, string>> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const out = new Map<string, string>();
  for (const line of text.split('\n').filter(Boolean)) {
    const fields = line.split(' ');
    const afterSeparator = fields.indexOf('-');
    out.set(unescapeMountPath(fields[4]!), fields[afterSeparator + 2] ?? '');
  }
  return out;
}

const kindOf = (path: string) =>
  lstat(path).then(
    (s) => (s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : 'other'),
    () => 'absent',
  );

/**
 * Unmounts disks whose image is gone: their state tree was removed without the driver (a test's or
 * benchmark's cleanup), so nothing can use them again; their space returns once unmounted.
 */
async function sweepOrphans(): Promise<void> {
  for (const [point, source] of await mounts()) {
    if (!point.startsWith(`${MOUNT_ROOT}/`) || !source.startsWith('/dev/loop')) continue;
    const backing = await readFile(`/sys/block/${basename(source)}/loop/backing_file`, 'utf8').catch(() => '');
    if (!backing.trim().endsWith('(deleted)')) continue;
    await command('umount', ['--lazy', point]).catch(() => undefined);
    await rmdir(point).catch(() => undefined);
  }
}

export function createStateDisks(): StateDisks {
  let swept: Promise<void> | undefined;

  async function makeImage(image: string, bytes: number, uid: number) {
    const file = await open(image, 'wx', 0o600);
    try {
      await file.truncate(bytes);
    } finally {
      await file.close();
    }
    try {
      // No inode tables or journal written ahead (lazy init), no reserved blocks: the image stays sparse.
      await command('mkfs.ext4', [
        '-q',
        '-F',
        '-m',
        '0',
        '-E',
        `root_owner=${uid}:${uid},lazy_itable_init=1,lazy_journal_init=1,nodiscard`,
        image,
      ]);
    } catch (error) {
      await rm(image, { force: true });
      throw error;
    }
  }

  async function mount(image: string, point: string) {
    // Unmounted, the mount point is root's and closed: nothing can be written to the host's disk through it.
    await mkdir(point, { recursive: true, mode: 0 });
    await command('mount', ['-o', 'loop,nosuid,nodev,discard', image, point]);
    await chmod(point, 0o700);
    await rmdir(join(point, 'lost+found')).catch(() => undefined);
  }

  return {
    async ensure(path, bytes, uid) {
      if (process.getuid?.() !== 0)
        throw new RuntimeError(
          "agent state disk: bounding an agent's disk needs root (a loop-mounted filesystem per agent)",
        );
      swept ??= mkdir(MOUNT_ROOT, { recursive: true, mode: 0o711 }).then(sweepOrphans);
      await swept;
      const image = imageOf(path);
      const point = mountPointOf(path);
      if ((await mounts()).has(point) && (await kindOf(path)) === 'link') return false;
      const fresh = (await kindOf(image)) === 'absent';
      if (fresh) {
        await mkdir(dirname(path), { recursive: true, mode: 0o711 });
        await makeImage(image, bytes, uid);
      }
      if (!(await mounts()).has(point)) await mount(image, point);
      const kind = await kindOf(path);
      if (kind === 'dir') {
        // A state directory made before disks were bounded: its files move into the filesystem.
        await command('cp', ['-a', `${path}/.`, point]);
        await rm(path, { recursive: true, force: true });
      }
      if (kind !== 'link') {
        const partial = `${path}.link-${process.pid}`;
        await rm(partial, { force: true });
        await symlink(point, partial);
        await rename(partial, path);
      }
      return fresh;
    },

    async remove(path) {
      const point = mountPointOf(path);
      // Lazily: a container still holding it keeps it until it exits; the host's mount goes now.
      if ((await mounts()).has(point)) await command('umount', ['--lazy', point]);
      await rmdir(point).catch(() => undefined);
      await rm(path, { recursive: (await kindOf(path)) === 'dir', force: true });
      await rm(imageOf(path), { force: true });
    },
  };
}
