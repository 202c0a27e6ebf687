import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { constants, type ReadStream } from 'node:fs';
import {
  chown,
  lstat,
  mkdir,
  open,
  opendir,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
} from 'node:fs/promises';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { inProcessLedger, type WorkspaceLedger } from './workspace-ledger.ts';

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

/**
 * Bounds on walking a tree the agent controls: past them a listing is cut and the workspace's size
 * is not measured (a write is refused), so no folder of millions of entries or thousands of levels
 * holds the service's threads or memory.
 */
export const WORKSPACE_WALK_LIMITS = { listedEntries: 10_000, walkedEntries: 100_000, depth: 32 };

/** Never blocks on what it opens (a FIFO, a device), never follows a last-part link, never takes a terminal. */
const OPEN_FOR_READING = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The temporary file an upload streams into before it is moved into place. */
const UPLOAD_TEMPORARY = /^\..+\.upload-[0-9a-f]{12}$/;

const isMissing = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

/**
 * A workspace path as the caller gave it, normalised and relative (`uploads/a.txt`), or a
 * WorkspacePathError: absolute paths, `..` that climbs out, NUL and backslashes are refused before
 * anything touches the disk. '' is the workspace itself.
 */
export function normaliseWorkspacePath(path: string): string {
  if (path.includes('\0') || path.includes('\\'))
    throw new WorkspacePathError('Path may not contain NUL or backslashes');
  if (path.startsWith('/')) throw new WorkspacePathError('Path must be relative to the workspace');
  const normal = posix.normalize(path).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../')) throw new WorkspacePathError('Path leaves the workspace');
  return normal === '.' ? '' : normal;
}

/** One agent's workspace as its functions reach it: where its state is, who owns what the platform writes, its ledger. */
interface Workspace {
  /** The workspace's real path, made on first use (a new agent's gateway may not have made it yet). */
  root(): Promise<string>;
  /** Gives what the platform made to the workspace's owner (when one is set). */
  own(path: string): Promise<void>;
  ledger: WorkspaceLedger;
}

const inside = (base: string, real: string) => real === base || real.startsWith(`${base}/`);
const relative = (base: string, real: string) => real.slice(base.length + 1);

/** The workspace folder in the state directory, made if missing, and refused if it is a link. */
async function workspaceRoot(stateDir: string, own: (path: string) => Promise<void>): Promise<string> {
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
}

/**
 * Refuses a path through a link that leaves the workspace, even one leading nowhere on the host:
 * an absolute target names a place in the agent's container, never one of the host's.
 */
async function refuseLinksOut(base: string, relativePath: string): Promise<void> {
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
    if (target.startsWith('/') || !inside(base, resolved))
      throw new WorkspacePathError('Path goes through a link that leaves the workspace');
    current = resolved;
  }
}

/** The real path of an existing `path`, confined; WorkspaceMissingError when nothing is there. */
async function existing(ws: Workspace, path: string): Promise<{ base: string; real: string }> {
  const base = await ws.root();
  await refuseLinksOut(base, normaliseWorkspacePath(path));
  const real = await realpath(posix.join(base, normaliseWorkspacePath(path))).catch((error) => {
    if (isMissing(error)) throw new WorkspaceMissingError(`No such file or folder: ${path}`);
    throw error;
  });
  if (!inside(base, real)) throw new WorkspacePathError('Path leaves the workspace');
  return { base, real };
}

/** Checks that an open descriptor is a file inside the workspace (by the kernel's own name for it). */
async function confinedDescriptor(base: string, fd: number): Promise<string> {
  const real = await readlink(`/proc/self/fd/${fd}`);
  if (!inside(base, real)) throw new WorkspacePathError('Path leaves the workspace');
  return real;
}

/** Makes the folders of `relativeDir` (confined at every step, never through a link); its real path. */
async function folder(ws: Workspace, base: string, relativeDir: string): Promise<string> {
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
      await ws.own(next);
    }
    current = next;
  }
  const real = await realpath(current);
  if (!inside(base, real)) throw new WorkspacePathError('Path leaves the workspace');
  return real;
}

/**
 * Bytes of every regular file under `dir` (links, FIFOs, devices neither followed nor opened),
 * walked within WORKSPACE_WALK_LIMITS: a tree past them is refused as too large to measure.
 * An upload's own temporary files (`.<name>.upload-<hex>`) are not counted: their bytes are reserved.
 */
async function bytesUnder(dir: string, limits: WorkspaceLimits): Promise<number> {
  let total = 0;
  let walked = 0;
  const tooLarge = () =>
    new WorkspaceLimitError(
      'total',
      limits.totalBytes,
      `Workspace too large to measure: more than ${WORKSPACE_WALK_LIMITS.walkedEntries} entries or ${WORKSPACE_WALK_LIMITS.depth} levels`,
    );
  const walk = async (path: string, depth: number): Promise<void> => {
    if (depth > WORKSPACE_WALK_LIMITS.depth) throw tooLarge();
    const entries = await opendir(path).catch(() => null);
    if (!entries) return;
    for await (const entry of entries) {
      if (++walked > WORKSPACE_WALK_LIMITS.walkedEntries) throw tooLarge();
      const child = posix.join(path, entry.name);
      if (entry.isDirectory()) await walk(child, depth + 1);
      else if (entry.isFile() && !UPLOAD_TEMPORARY.test(entry.name))
        total += await lstat(child).then(
          (s) => (s.isFile() ? s.size : 0),
          () => 0,
        );
    }
  };
  await walk(dir, 0);
  return total;
}

async function listFolder(
  ws: Workspace,
  path: string,
): Promise<{ path: string; entries: WorkspaceEntry[]; truncated?: boolean }> {
  const { base, real } = await existing(ws, path);
  if (!(await stat(real)).isDirectory()) throw new WorkspacePathError(`Not a folder: ${path}`);
  const entries: WorkspaceEntry[] = [];
  let truncated = false;
  let seen = 0;
  for await (const entry of await opendir(real)) {
    // Entries skipped count too: a folder of a million FIFOs is cut like one of a million files.
    if (++seen > WORKSPACE_WALK_LIMITS.walkedEntries || entries.length >= WORKSPACE_WALK_LIMITS.listedEntries) {
      truncated = true;
      break;
    }
    // Links, FIFOs, sockets and devices are the agent's own business: neither listed nor followed.
    if (!entry.isFile() && !entry.isDirectory()) continue;
    const s = await lstat(posix.join(real, entry.name)).catch(() => null);
    if (!s || (!s.isFile() && !s.isDirectory())) continue;
    entries.push({
      name: entry.name,
      path: relative(base, posix.join(real, entry.name)) || entry.name,
      type: s.isDirectory() ? 'directory' : 'file',
      size: s.isDirectory() ? 0 : s.size,
      updatedAt: s.mtime.toISOString(),
    });
  }
  entries.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'directory' ? -1 : 1));
  return { path: real === base ? '' : relative(base, real), entries, ...(truncated ? { truncated } : {}) };
}

async function openFile(ws: Workspace, path: string): Promise<{ name: string; size: number; stream: ReadStream }> {
  const { base, real } = await existing(ws, path);
  const notAFile = () => new WorkspacePathError(`Not a regular file: ${path}`);
  if (!(await lstat(real)).isFile()) throw notAFile();
  const handle = await open(real, OPEN_FOR_READING);
  try {
    await confinedDescriptor(base, handle.fd);
    const s = await handle.stat();
    if (!s.isFile()) throw notAFile();
    return { name: posix.basename(real), size: s.size, stream: handle.createReadStream() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** What an upload may not pass: the per-file limit, and the bytes reserved for it (each with its error). */
interface UploadBounds {
  fileBytes: number;
  reservedBytes: number;
  tooLarge(): WorkspaceLimitError;
  full(): WorkspaceLimitError;
}

/**
 * Streams `source` into a new file beside `finalPath`, then moves it over `finalPath` as the
 * ledger settles `reservationId`; the bytes written. A refused or broken upload leaves nothing.
 */
async function streamIntoPlace(
  ws: Workspace,
  base: string,
  finalPath: string,
  source: Readable,
  bounds: UploadBounds,
  reservationId: string,
): Promise<number> {
  const dir = posix.dirname(finalPath);
  const temporary = posix.join(dir, `.${posix.basename(finalPath)}.upload-${randomBytes(6).toString('hex')}`);
  const handle = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  let streaming = false;
  let size = 0;
  try {
    await confinedDescriptor(base, handle.fd);
    await ws.own(temporary);
    const sink = handle.createWriteStream({ flush: true });
    streaming = true;
    try {
      // The source is read, never destroyed: over a limit the caller can still answer on its connection.
      for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > bounds.fileBytes) throw bounds.tooLarge();
        if (size > bounds.reservedBytes) throw bounds.full();
        if (!sink.write(chunk)) await once(sink, 'drain');
      }
      sink.end();
      await finished(sink);
    } catch (error) {
      sink.destroy();
      await once(sink, 'close').catch(() => undefined);
      throw error;
    }
    // Moved into place under the ledger's lock: its bytes go from reserved to on disk in one step.
    await ws.ledger.settle(reservationId, async () => {
      // The folder is checked again: the agent may have replaced it with a link while bytes arrived.
      if ((await realpath(dir)) !== dir) throw new WorkspacePathError('Path goes through a link');
      await rename(temporary, finalPath);
    });
    return size;
  } catch (error) {
    if (!streaming) await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

async function writeFile(
  ws: Workspace,
  path: string,
  source: Readable,
  limits: WorkspaceLimits,
  declaredBytes?: number,
): Promise<{ path: string; size: number; usedBytes: number }> {
  const target = normaliseWorkspacePath(path);
  if (!target) throw new WorkspacePathError('Path names the workspace itself, not a file');
  const tooLarge = () =>
    new WorkspaceLimitError(
      'file',
      limits.fileBytes,
      `File too large: at most ${limits.fileBytes} bytes per file on your plan`,
    );
  if (declaredBytes !== undefined && declaredBytes > limits.fileBytes) throw tooLarge();
  const base = await ws.root();
  const dir = await folder(ws, base, posix.dirname(target) === '.' ? '' : posix.dirname(target));
  const finalPath = posix.join(dir, posix.basename(target));
  const wanted = Math.min(limits.fileBytes, declaredBytes ?? limits.fileBytes);
  const reservation = await ws.ledger.reserve(async (reservedByOthers) => {
    const previous = await lstat(finalPath).catch(() => null);
    if (previous && !previous.isFile()) throw new WorkspacePathError(`Not a file: ${target}`);
    const usedBefore = (await bytesUnder(base, limits)) - (previous?.size ?? 0);
    const room = limits.totalBytes - usedBefore - reservedByOthers;
    return { usedBefore, room, bytes: Math.max(0, Math.min(wanted, room)) };
  });
  const { usedBefore, room } = reservation;
  const full = () =>
    new WorkspaceLimitError(
      'total',
      limits.totalBytes,
      `Workspace full: ${limits.totalBytes - Math.max(room, 0)} of ${limits.totalBytes} bytes used or being uploaded on your plan, this file needs more than the ${Math.max(room, 0)} left`,
    );
  let committed = false;
  try {
    if (declaredBytes !== undefined && declaredBytes > reservation.bytes) throw full();
    const bounds = { fileBytes: limits.fileBytes, reservedBytes: reservation.bytes, tooLarge, full };
    const size = await streamIntoPlace(ws, base, finalPath, source, bounds, reservation.id);
    committed = true;
    return { path: relative(base, finalPath), size, usedBytes: usedBefore + size };
  } finally {
    if (!committed) await ws.ledger.settle(reservation.id);
  }
}

async function removeEntry(ws: Workspace, path: string): Promise<{ path: string }> {
  const target = normaliseWorkspacePath(path);
  if (!target) throw new WorkspacePathError('Path names the workspace itself');
  const base = await ws.root();
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
      if ((error as NodeJS.ErrnoException).code === 'ENOTEMPTY')
        throw new WorkspacePathError(`Folder not empty: ${target}`);
      throw error;
    });
  } else {
    await rm(full);
  }
  return { path: relative(base, full) };
}

/**
 * Files of one agent's OpenClaw workspace, reached through the host directory that holds its state
 * (a local engine's bind mount, or the process driver's home). The agent writes there too, so every
 * path is checked where it lands: a link anywhere along it that leaves the workspace is refused,
 * and an opened file is checked again by what the kernel says it opened (the agent may swap a
 * folder for a link between the check and the open). What the platform writes belongs to `ownerUid`.
 */
export function agentWorkspace(stateDir: string, options: { ownerUid?: number; ledger?: WorkspaceLedger } = {}) {
  const own = async (path: string) => {
    if (options.ownerUid !== undefined) await chown(path, options.ownerUid, options.ownerUid);
  };
  let rootOnce: Promise<string> | undefined;
  const ws: Workspace = {
    root: () => {
      rootOnce ??= workspaceRoot(stateDir, own);
      // A failed look (no state yet) is looked at again next time.
      rootOnce.catch(() => {
        rootOnce = undefined;
      });
      return rootOnce;
    },
    own,
    ledger: options.ledger ?? inProcessLedger(stateDir),
  };

  return {
    /** The entries of a folder, folders first, then by name. */
    list: (path: string): Promise<{ path: string; entries: WorkspaceEntry[]; truncated?: boolean }> =>
      listFolder(ws, path),

    /**
     * One file to stream out, opened once (what is checked is what is read) and only if it is a
     * regular file: a FIFO or device the agent made is refused before and after a non-blocking open,
     * so it can never hold one of the service's threads waiting for a writer.
     */
    read: (path: string): Promise<{ name: string; size: number; stream: ReadStream }> => openFile(ws, path),

    /**
     * Streams `source` into `path` (folders made as needed), never holding the file in memory:
     * to a new file beside it first, moved over the old one once complete, so a refused or broken
     * upload leaves what was there. Its bytes are reserved in the ledger before any arrive (the
     * `declaredBytes` when the caller knows them, else up to the per-file limit), so concurrent
     * writes never pass `limits` together; over them the stream is cut and WorkspaceLimitError thrown.
     */
    write: (
      path: string,
      source: Readable,
      limits: WorkspaceLimits,
      declaredBytes?: number,
    ): Promise<{ path: string; size: number; usedBytes: number }> => writeFile(ws, path, source, limits, declaredBytes),

    /** Deletes one file, or an empty folder. */
    remove: (path: string): Promise<{ path: string }> => removeEntry(ws, path),

    /** Makes a folder (and its parents) if missing; its normalised path. */
    async ensureFolder(path: string): Promise<string> {
      const base = await ws.root();
      return relative(base, await folder(ws, base, normaliseWorkspacePath(path))) || '';
    },

    /** Bytes the workspace holds now (its regular files). */
    async usedBytes(): Promise<number> {
      return bytesUnder(await ws.root(), { fileBytes: 0, totalBytes: 0 });
    },
  };
}

export type AgentWorkspace = ReturnType<typeof agentWorkspace>;
