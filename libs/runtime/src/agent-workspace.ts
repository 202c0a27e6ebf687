import { randomBytes } from 'node:crypto';
import { constants, type ReadStream } from 'node:fs';
import { chown, lstat, mkdir, open, readdir, readlink, realpath, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { posix } from 'node:path';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** The OpenClaw workspace inside the agent's state directory (/home/node/.openclaw/workspace in the container). */
export const WORKSPACE_DIR = 'workspace';

/** A path the caller may not reach: outside the workspace, through a link leaving it, or malformed (400). */
export class WorkspacePathError extends Error {
  override name = 'WorkspacePathError';
}
/** No file or folder at that path (404). */
export class WorkspaceMissingError extends Error {
  override name = 'WorkspaceMissingError';
}
/** A write over a limit: `kind` says which (the file's own size, or the workspace's total). */
export class WorkspaceLimitError extends Error {
  override name = 'WorkspaceLimitError';
  readonly kind: 'file' | 'total';
  readonly limitBytes: number;
  constructor(kind: 'file' | 'total', limitBytes: number, message: string) {
    super(message);
    this.kind = kind;
    this.limitBytes = limitBytes;
  }
}

export interface WorkspaceEntry {
  name: string;
  path: string;
  type: 'file' | 'directory';
  size: number;
  updatedAt: string;
}

export interface WorkspaceLimits {
  fileBytes: number;
  totalBytes: number;
}

const isMissing = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

/**
 * A workspace path as the caller gave it, normalised and relative (`uploads/a.txt`), or a
 * WorkspacePathError: absolute paths, `..` that climbs out, NUL and backslashes are refused before
 * anything touches the disk. '' is the workspace itself.
 */
export function normaliseWorkspacePath(path: string): string {
  if (path.includes('\0') || path.includes('\\')) throw new WorkspacePathError('Path may not contain NUL or backslashes');
  if (path.startsWith('/')) throw new WorkspacePathError('Path must be relative to the workspace');
  const normal = posix.normalize(path).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../')) throw new WorkspacePathError('Path leaves the workspace');
  return normal === '.' ? '' : normal;
}

/**
 * Files of one agent's OpenClaw workspace, reached through the host directory that holds its state
 * (a local engine's bind mount, or the process driver's home). The agent writes there too, so every
 * path is checked where it lands: a link anywhere along it that leaves the workspace is refused,
 * and an opened file is checked again by what the kernel says it opened (the agent may swap a
 * folder for a link between the check and the open). What the platform writes belongs to `ownerUid`.
 */
export function agentWorkspace(stateDir: string, options: { ownerUid?: number } = {}) {
  const own = async (path: string) => {
    if (options.ownerUid !== undefined) await chown(path, options.ownerUid, options.ownerUid);
  };
  let rootOnce: Promise<string> | undefined;
  /** The workspace's real path, made on first use (a new agent's gateway may not have made it yet). */
  const root = () => {
    rootOnce ??= (async () => {
      const state = await realpath(stateDir).catch((error) => {
        if (isMissing(error)) throw new WorkspaceMissingError('The agent has no state yet');
        throw error;
      });
      const dir = posix.join(state, WORKSPACE_DIR);
      if (
        (await lstat(dir).then(
          (s) => s.isSymbolicLink(),
          () => null,
        )) === null
      ) {
        await mkdir(dir, { mode: 0o755 }).catch((error) => {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        });
        await own(dir);
      }
      const real = await realpath(dir);
      if (real !== dir) throw new WorkspacePathError('The workspace is a link');
      return real;
    })();
    rootOnce.catch(() => {
      rootOnce = undefined;
    });
    return rootOnce;
  };
  const inside = (base: string, real: string) => real === base || real.startsWith(`${base}/`);
  const relative = (base: string, real: string) => real.slice(base.length + 1);

  /**
   * Refuses a path through a link that leaves the workspace, even one leading nowhere on the host:
   * an absolute target names a place in the agent's container, never one of the host's.
   */
  const refuseLinksOut = async (base: string, relativePath: string) => {
    let current = base;
    for (const part of relativePath ? relativePath.split('/') : []) {
      const next = posix.join(current, part);
      const found = await lstat(next).catch(() => null);
      if (!found) return;
      if (!found.isSymbolicLink()) {
        current = next;
        continue;
      }
      const target = await readlink(next);
      const resolved = posix.normalize(posix.join(current, target));
      if (target.startsWith('/') || !inside(base, resolved)) throw new WorkspacePathError('Path goes through a link that leaves the workspace');
      current = resolved;
    }
  };

  /** The real path of an existing `path`, confined; WorkspaceMissingError when nothing is there. */
  const existing = async (path: string) => {
    const base = await root();
    await refuseLinksOut(base, normaliseWorkspacePath(path));
    const real = await realpath(posix.join(base, normaliseWorkspacePath(path))).catch((error) => {
      if (isMissing(error)) throw new WorkspaceMissingError(`No such file or folder: ${path}`);
      throw error;
    });
    if (!inside(base, real)) throw new WorkspacePathError('Path leaves the workspace');
    return { base, real };
  };

  /** Checks that an open descriptor is a file inside the workspace (by the kernel's own name for it). */
  const confinedDescriptor = async (base: string, fd: number) => {
    const real = await readlink(`/proc/self/fd/${fd}`);
    if (!inside(base, real)) throw new WorkspacePathError('Path leaves the workspace');
    return real;
  };

  /** Makes the folders of `relativeDir` (confined at every step, never through a link); its real path. */
  const folder = async (base: string, relativeDir: string) => {
    let current = base;
    for (const part of relativeDir ? relativeDir.split('/') : []) {
      const next = posix.join(current, part);
      const found = await lstat(next).catch((error) => {
        if (isMissing(error)) return null;
        throw error;
      });
      if (found?.isSymbolicLink()) throw new WorkspacePathError('Path goes through a link');
      if (found && !found.isDirectory()) throw new WorkspacePathError(`Not a folder: ${relative(base, next)}`);
      if (!found) {
        await mkdir(next, { mode: 0o755 }).catch((error) => {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        });
        await own(next);
      }
      current = next;
    }
    const real = await realpath(current);
    if (!inside(base, real)) throw new WorkspacePathError('Path leaves the workspace');
    return real;
  };

  /** Bytes of every file under `dir` (links not followed). */
  const bytesUnder = async (dir: string): Promise<number> => {
    let total = 0;
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) total += await bytesUnder(path);
      else if (entry.isFile())
        total += await lstat(path).then(
          (s) => s.size,
          () => 0,
        );
    }
    return total;
  };

  return {
    /** The entries of a folder, folders first, then by name. */
    async list(path: string): Promise<{ path: string; entries: WorkspaceEntry[] }> {
      const { base, real } = await existing(path);
      if (!(await stat(real)).isDirectory()) throw new WorkspacePathError(`Not a folder: ${path}`);
      const entries: WorkspaceEntry[] = [];
      for (const entry of await readdir(real, { withFileTypes: true })) {
        // Links are the agent's own business: they are neither listed nor followed.
        if (!entry.isFile() && !entry.isDirectory()) continue;
        const s = await lstat(posix.join(real, entry.name)).catch(() => null);
        if (!s) continue;
        entries.push({
          name: entry.name,
          path: relative(base, posix.join(real, entry.name)) || entry.name,
          type: s.isDirectory() ? 'directory' : 'file',
          size: s.isDirectory() ? 0 : s.size,
          updatedAt: s.mtime.toISOString(),
        });
      }
      entries.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'directory' ? -1 : 1));
      return { path: real === base ? '' : relative(base, real), entries };
    },

    /** One file to stream out, opened once (what is checked is what is read). */
    async read(path: string): Promise<{ name: string; size: number; stream: ReadStream }> {
      const { base, real } = await existing(path);
      const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        await confinedDescriptor(base, handle.fd);
        const s = await handle.stat();
        if (!s.isFile()) throw new WorkspacePathError(`Not a file: ${path}`);
        return { name: posix.basename(real), size: s.size, stream: handle.createReadStream() };
      } catch (error) {
        await handle.close();
        throw error;
      }
    },

    /**
     * Streams `source` into `path` (folders made as needed), never holding the file in memory:
     * to a new file beside it first, moved over the old one once complete, so a refused or broken
     * upload leaves what was there. Over `limits` the stream is cut and WorkspaceLimitError thrown.
     */
    async write(path: string, source: Readable, limits: WorkspaceLimits): Promise<{ path: string; size: number; usedBytes: number }> {
      const target = normaliseWorkspacePath(path);
      if (!target) throw new WorkspacePathError('Path names the workspace itself, not a file');
      const base = await root();
      const dir = await folder(base, posix.dirname(target) === '.' ? '' : posix.dirname(target));
      const name = posix.basename(target);
      const finalPath = posix.join(dir, name);
      const previous = await lstat(finalPath).catch(() => null);
      if (previous && !previous.isFile()) throw new WorkspacePathError(`Not a file: ${target}`);
      const usedBefore = (await bytesUnder(base)) - (previous?.size ?? 0);
      const room = limits.totalBytes - usedBefore;
      const temporary = posix.join(dir, `.${name}.upload-${randomBytes(6).toString('hex')}`);
      const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
      let size = 0;
      let streaming = false;
      try {
        await confinedDescriptor(base, handle.fd);
        await own(temporary);
        const sink = handle.createWriteStream({ flush: true });
        streaming = true;
        try {
          // The source is read, never destroyed: over a limit the caller can still answer on its connection.
          for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (size > limits.fileBytes) throw new WorkspaceLimitError('file', limits.fileBytes, `File too large: at most ${limits.fileBytes} bytes per file on your plan`);
            if (size > room)
              throw new WorkspaceLimitError(
                'total',
                limits.totalBytes,
                `Workspace full: ${usedBefore} of ${limits.totalBytes} bytes used on your plan, this file needs more than the ${Math.max(room, 0)} left`,
              );
            if (!sink.write(chunk)) await once(sink, 'drain');
          }
          sink.end();
          await finished(sink);
        } catch (error) {
          sink.destroy();
          await once(sink, 'close').catch(() => undefined);
          throw error;
        }
        // The folder is checked again: the agent may have replaced it with a link while bytes arrived.
        if ((await realpath(dir)) !== dir) throw new WorkspacePathError('Path goes through a link');
        await rename(temporary, finalPath);
      } catch (error) {
        if (!streaming) await handle.close().catch(() => undefined);
        await unlink(temporary).catch(() => undefined);
        throw error;
      }
      return { path: relative(base, finalPath), size, usedBytes: usedBefore + size };
    },

    /** Deletes one file, or an empty folder. */
    async remove(path: string): Promise<{ path: string }> {
      const target = normaliseWorkspacePath(path);
      if (!target) throw new WorkspacePathError('Path names the workspace itself');
      const base = await root();
      await refuseLinksOut(base, posix.dirname(target) === '.' ? '' : posix.dirname(target));
      // The link itself when the last part is one (removing a link never touches what it points to).
      const dir = await realpath(posix.join(base, posix.dirname(target))).catch((error) => {
        if (isMissing(error)) throw new WorkspaceMissingError(`No such file or folder: ${path}`);
        throw error;
      });
      if (!inside(base, dir)) throw new WorkspacePathError('Path leaves the workspace');
      const full = posix.join(dir, posix.basename(target));
      const found = await lstat(full).catch((error) => {
        if (isMissing(error)) return null;
        throw error;
      });
      if (!found) throw new WorkspaceMissingError(`No such file or folder: ${path}`);
      if (found.isDirectory()) {
        await rmdir(full).catch((error) => {
          if ((error as NodeJS.ErrnoException).code === 'ENOTEMPTY') throw new WorkspacePathError(`Folder not empty: ${target}`);
          throw error;
        });
      } else {
        await rm(full);
      }
      return { path: relative(base, full) };
    },

    /** Makes a folder (and its parents) if missing; its normalised path. */
    async ensureFolder(path: string): Promise<string> {
      const base = await root();
      return relative(base, await folder(base, normaliseWorkspacePath(path))) || '';
    },

    /** Bytes the workspace holds now. */
    async usedBytes(): Promise<number> {
      return bytesUnder(await root());
    },
  };
}

export type AgentWorkspace = ReturnType<typeof agentWorkspace>;
