import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chown, lstat, mkdir, open, opendir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { extract, type Header, type Pack, pack } from 'tar-stream';
import { scrubbing } from './secret-scrubbing.ts';

/** What the first entry of every snapshot archive says it is. */
export const SNAPSHOT_FORMAT = 'agentyard-snapshot/1';

/**
 * What a snapshot says about itself (`manifest.json`, the archive's first entry). The applied
 * configuration holds no secret: channel tokens stay sealed in the platform and are bound again
 * on restore, never exported.
 */
export interface SnapshotManifest {
  format: typeof SNAPSHOT_FORMAT;
  agentId: string;
  openclawVersion: string | null;
  createdAt: string;
  reason: string;
  label: string | null;
  config: Record<string, unknown>;
  skills: string[];
  /** Channels the agent had bound (names only). */
  channels: string[];
}

/**
 * Top-level names of the state directory a snapshot leaves out: the gateway's config file (its
 * tokens and AI key; the platform writes it again for each container), the agent's device identity
 * and paired devices (a clone gets keys of its own, a restore keeps the current ones), channel
 * credentials, and what is only scratch.
 */
const LEFT_OUT = new Set(['identity', 'credentials', 'devices', 'tmp', 'cache']);
/** The folder a restore unpacks into before moving its parts into place. */
export const RESTORE_STAGING_PREFIX = '.snapshot-restore-';
export const isLeftOutOfSnapshots = (topLevelName: string) =>
  LEFT_OUT.has(topLevelName) ||
  topLevelName.startsWith('openclaw.json') ||
  topLevelName.startsWith(RESTORE_STAGING_PREFIX);

/** Bounds on what a snapshot walks and what an archive may unpack to. */
export const SNAPSHOT_LIMITS = { entries: 100_000, depth: 32 };

/** An archive that is not a well-formed snapshot: malformed, a hostile entry, a digest that does not match (400). */
export class SnapshotArchiveError extends Error {
  override name = 'SnapshotArchiveError';
}
/** An archive unpacking past its allowed size (413). */
export class SnapshotTooLargeError extends Error {
  override name = 'SnapshotTooLargeError';
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`Snapshot unpacks to more than ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

interface StateFile {
  path: string;
  size: number;
  mode: number;
  mtime: Date;
}

/** Regular files and folders of the state directory (no links, devices, FIFOs or sockets), bounded. */
async function stateEntries(stateDir: string): Promise<{ dirs: string[]; files: StateFile[] }> {
  const dirs: string[] = [];
  const files: StateFile[] = [];
  let seen = 0;
  const walk = async (relative: string, depth: number) => {
    if (depth > SNAPSHOT_LIMITS.depth) throw new SnapshotArchiveError('State directory nests too deep to snapshot');
    const dir = await opendir(join(stateDir, relative));
    for await (const entry of dir) {
      if (++seen > SNAPSHOT_LIMITS.entries)
        throw new SnapshotArchiveError('State directory has too many entries to snapshot');
      if (depth === 0 && isLeftOutOfSnapshots(entry.name)) continue;
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        dirs.push(path);
        await walk(path, depth + 1);
      } else if (entry.isFile()) {
        const info = await lstat(join(stateDir, path));
        files.push({ path, size: info.size, mode: info.mode & 0o700, mtime: info.mtime });
      }
    }
  };
  await walk('', 0);
  return { dirs, files };
}

/** Adds an entry without bytes (text, or a folder), resolving once tar-stream has taken it. */
function addEntry(archive: Pack, header: Partial<Header> & Pick<Header, 'name'>, text?: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error | null) => (error ? reject(error) : resolve());
    if (text === undefined) archive.entry(header, done);
    else archive.entry(header, text, done);
  });
}

/** Adds one state file, its known secrets replaced; its SHA-256 as archived. */
async function addStateFile(archive: Pack, stateDir: string, file: StateFile, secrets: string[]): Promise<string> {
  const handle = await open(
    join(stateDir, file.path),
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  );
  const hash = createHash('sha256');
  const scrub = scrubbing(secrets);
  // Written chunk by chunk with the entry's own backpressure: tar-stream's streams are not Node's, so no pipeline() between them.
  try {
    await new Promise<void>((resolve, reject) => {
      const entry = archive.entry(
        { name: `state/${file.path}`, size: file.size, mode: file.mode || 0o600, mtime: file.mtime },
        (error) => (error ? reject(error) : resolve()),
      );
      (async () => {
        for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
          const out = scrub.next(chunk);
          hash.update(out);
          if (!entry.write(out)) await new Promise<void>((drained) => entry.once('drain', () => drained()));
        }
        const rest = scrub.end();
        hash.update(rest);
        entry.end(rest);
      })().catch((error: Error) => {
        entry.destroy(error);
        reject(error);
      });
    });
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/**
 * The agent's state as a gzipped tar: `manifest.json`, then `state/…` (the state directory less
 * what `isLeftOutOfSnapshots` names, every known secret replaced), then `checksums.json` (each
 * file's SHA-256 as archived). Call with the agent's container paused or stopped: nothing may
 * write while its files are read (a torn SQLite file would not open again).
 */
export function packAgentState(options: { stateDir: string; manifest: SnapshotManifest; secrets: string[] }): Readable {
  const archive = pack();
  const out = new PassThrough();
  const write = async () => {
    const { dirs, files } = await stateEntries(options.stateDir);
    await addEntry(archive, { name: 'manifest.json', mode: 0o600 }, JSON.stringify(options.manifest));
    for (const dir of dirs) await addEntry(archive, { name: `state/${dir}`, type: 'directory', mode: 0o700 });
    const checksums: Record<string, string> = {};
    for (const file of files)
      checksums[file.path] = await addStateFile(archive, options.stateDir, file, options.secrets);
    await addEntry(archive, { name: 'checksums.json', mode: 0o600 }, JSON.stringify({ files: checksums }));
    archive.finalize();
  };
  write().catch((error: Error) => archive.destroy(error));
  // The fastest level: the agent stays paused while this runs, and most of its state is SQLite and text.
  pipeline(archive, createGzip({ level: 1 }), out).catch((error: Error) => out.destroy(error));
  return out;
}

/** A path inside the archive's `state/`, normalised, or a SnapshotArchiveError. */
function statePathOf(name: string): string {
  if (name.includes('\0') || name.includes('\\'))
    throw new SnapshotArchiveError('Archive entry name holds NUL or a backslash');
  if (name.startsWith('/')) throw new SnapshotArchiveError('Archive entry has an absolute path');
  const normal = posix.normalize(name).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../') || normal.includes('/../'))
    throw new SnapshotArchiveError('Archive entry leaves the archive');
  if (!normal.startsWith('state/'))
    throw new SnapshotArchiveError(`Unexpected archive entry ${JSON.stringify(name.slice(0, 100))}`);
  const path = normal.slice('state/'.length);
  if (!path || isLeftOutOfSnapshots(path.split('/')[0]!))
    throw new SnapshotArchiveError('Archive entry names a path snapshots never hold');
  if (path.split('/').length > SNAPSHOT_LIMITS.depth) throw new SnapshotArchiveError('Archive nests too deep');
  return path;
}

/** Each chunk of an entry in turn, the entry paused while `each` works; rejects with the first error. */
function eachChunk(stream: unknown, each: (chunk: Buffer) => unknown): Promise<void> {
  const entry = stream as {
    on(event: string, listener: (...args: never[]) => void): void;
    pause(): void;
    resume(): void;
  };
  return new Promise((resolve, reject) => {
    let chain: Promise<unknown> = Promise.resolve();
    let failed = false;
    entry.on('data', (chunk: Buffer) => {
      entry.pause();
      chain = chain
        .then(() => each(chunk))
        .then(
          () => entry.resume(),
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
    });
    entry.on('end', () => void chain.then(() => (failed ? undefined : resolve())));
    entry.on('error', (error: Error) => reject(error));
  });
}

/** A new file (never an existing one or through a link), its folder made as needed. */
async function createFile(path: string) {
  await mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
  return open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
}

async function readSmall(stream: AsyncIterable<unknown>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  await eachChunk(stream, (chunk) => {
    size += chunk.length;
    if (size > limit) throw new SnapshotArchiveError('Archive metadata entry is too large');
    chunks.push(chunk);
  });
  return Buffer.concat(chunks).toString('utf8');
}

function parseManifest(text: string): SnapshotManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SnapshotArchiveError('Snapshot manifest is not JSON');
  }
  const m = value as Partial<SnapshotManifest> | null;
  if (!m || typeof m !== 'object' || m.format !== SNAPSHOT_FORMAT)
    throw new SnapshotArchiveError('Not a snapshot archive (manifest format)');
  if (typeof m.agentId !== 'string' || typeof m.createdAt !== 'string' || typeof m.reason !== 'string')
    throw new SnapshotArchiveError('Snapshot manifest lacks agentId, createdAt or reason');
  if (!m.config || typeof m.config !== 'object' || Array.isArray(m.config))
    throw new SnapshotArchiveError('Snapshot manifest lacks its config');
  const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string');
  if (!strings(m.skills) || !strings(m.channels))
    throw new SnapshotArchiveError('Snapshot manifest lacks its skills or channels');
  return {
    ...m,
    label: typeof m.label === 'string' ? m.label : null,
    openclawVersion: typeof m.openclawVersion === 'string' ? m.openclawVersion : null,
  } as SnapshotManifest;
}

/**
 * Unpacks a snapshot archive into `targetDir` (made if absent; expected empty), checking it as it
 * goes: the manifest first, only folders and regular files under `state/` (no absolute path, no
 * `..`, no link, no device, FIFO or other kind), at most `maxBytes` unpacked, and every file's
 * SHA-256 against `checksums.json`, which must name exactly the files unpacked. Throws
 * SnapshotArchiveError or SnapshotTooLargeError; the caller removes `targetDir` then.
 */
export async function unpackAgentState(
  archive: Readable,
  targetDir: string,
  options: { maxBytes: number; ownerUid?: number },
): Promise<SnapshotManifest> {
  return readArchive(archive, targetDir, options);
}

/** Checks an archive as unpacking would (manifest, entries, size, every SHA-256) without writing anything. */
export async function verifyAgentArchive(archive: Readable, options: { maxBytes: number }): Promise<SnapshotManifest> {
  return readArchive(archive, null, options);
}

/** What reading one archive has met so far. */
interface ArchiveReading {
  /** Where files are unpacked; null to check only. */
  targetDir: string | null;
  maxBytes: number;
  own(path: string): Promise<void>;
  manifest: SnapshotManifest | null;
  checksums: Record<string, unknown> | null;
  /** Each file read, with the SHA-256 of its bytes. */
  written: Map<string, string>;
  /** Bytes of every file read. */
  total: number;
  count: number;
}

type EntryHeader = { name: string; type?: string | null };
type EntryStream = AsyncIterable<unknown> & { resume(): unknown };

/** One entry, read to its end (tar-stream gives the next only then). */
async function readEntry(r: ArchiveReading, header: EntryHeader, entry: EntryStream): Promise<void> {
  if (++r.count > SNAPSHOT_LIMITS.entries + 2) throw new SnapshotArchiveError('Archive has too many entries');
  if (r.manifest === null) {
    if (header.name !== 'manifest.json' || header.type !== 'file')
      throw new SnapshotArchiveError('Archive does not begin with its manifest');
    r.manifest = parseManifest(await readSmall(entry, 1024 * 1024));
    return;
  }
  if (r.checksums !== null) throw new SnapshotArchiveError('Archive has entries after its checksums');
  if (header.name === 'checksums.json' && header.type === 'file') {
    const parsed = JSON.parse(await readSmall(entry, 16 * 1024 * 1024).catch(() => '{}')) as { files?: unknown };
    if (!parsed.files || typeof parsed.files !== 'object')
      throw new SnapshotArchiveError('Archive checksums are malformed');
    r.checksums = parsed.files as Record<string, unknown>;
    return;
  }
  const path = statePathOf(header.name);
  const target = r.targetDir === null ? null : join(r.targetDir, path);
  if (header.type === 'directory') {
    if (target !== null) {
      await mkdir(target, { recursive: true, mode: 0o700 });
      await r.own(target);
    }
    // Drained to its end before the next entry is asked for (a directory has no bytes, but its stream must end).
    await eachChunk(entry, () => undefined);
    return;
  }
  if (header.type !== 'file')
    throw new SnapshotArchiveError(
      `Archive entry ${JSON.stringify(path.slice(0, 100))} is a ${header.type}: snapshots hold only files and folders`,
    );
  if (r.written.has(path)) throw new SnapshotArchiveError('Archive names a file twice');
  r.written.set(path, await readFileEntry(r, target, entry));
}

/** A file entry's bytes, counted against the archive's bound and written to `target` (when unpacking); their SHA-256. */
async function readFileEntry(r: ArchiveReading, target: string | null, entry: EntryStream): Promise<string> {
  const hash = createHash('sha256');
  const handle = target === null ? null : await createFile(target);
  try {
    // Read chunk by chunk: tar-stream's entries are not Node streams, so no pipeline() from them.
    await eachChunk(entry, async (chunk) => {
      r.total += chunk.length;
      if (r.total > r.maxBytes) throw new SnapshotTooLargeError(r.maxBytes);
      hash.update(chunk);
      if (handle) await handle.write(chunk);
    });
  } finally {
    await handle?.close();
  }
  if (target !== null) await r.own(target);
  return hash.digest('hex');
}

/**
 * Each entry of the gzipped tar in turn, through `each`. tar-stream's own 'entry' events with their
 * `next` callback: its async iterators can wait for ever once an entry's iterator is left early or
 * a next entry is asked for too soon.
 */
function eachEntry(
  archive: Readable,
  entries: ReturnType<typeof extract>,
  each: (header: EntryHeader, entry: EntryStream) => Promise<void>,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let last: Promise<void> = Promise.resolve();
    entries.on('entry', (header, stream, nextEntry) => {
      last = each(header, stream).then(() => nextEntry());
      last.catch(reject);
    });
    // The archive's end may pass while its last entry is still being handled.
    entries.on('finish', () => last.then(resolve, reject));
    entries.on('error', reject);
    pipeline(archive, createGunzip(), entries).catch((error: Error) =>
      reject(error instanceof SnapshotArchiveError ? error : new SnapshotArchiveError('Archive is not a gzipped tar')),
    );
  });
}

/** What a failure while reading says to the caller: the archive's fault (4xx), or the host's. */
function readingFailure(error: unknown): unknown {
  if (error instanceof SnapshotArchiveError || error instanceof SnapshotTooLargeError) return error;
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (code === 'EEXIST' || code === 'ELOOP' || code === 'ENOTDIR')
    return new SnapshotArchiveError('Archive entry collides with another');
  // What the host's disk refused is the platform's failure; anything else (zlib, tar) is the archive's.
  if (syscall) return error;
  return new SnapshotArchiveError('Archive is not a well-formed gzipped tar');
}

/** The manifest of an archive read to its end, once its checksums name exactly its files, each with its SHA-256. */
function checkedManifest(r: ArchiveReading): SnapshotManifest {
  const { manifest, checksums, written } = r;
  if (!manifest) throw new SnapshotArchiveError('Archive is empty');
  if (!checksums) throw new SnapshotArchiveError('Archive lacks its checksums');
  if (Object.keys(checksums).length !== written.size)
    throw new SnapshotArchiveError('Archive checksums do not name exactly its files');
  for (const [path, digest] of written)
    if (checksums[path] !== digest)
      throw new SnapshotArchiveError(
        `SHA-256 of ${JSON.stringify(path.slice(0, 100))} does not match the archive's checksums`,
      );
  return manifest;
}

async function readArchive(
  archive: Readable,
  targetDir: string | null,
  options: { maxBytes: number; ownerUid?: number },
): Promise<SnapshotManifest> {
  const entries = extract();
  const r: ArchiveReading = {
    targetDir,
    maxBytes: options.maxBytes,
    own: async (path) => {
      if (options.ownerUid !== undefined) await chown(path, options.ownerUid, options.ownerUid);
    },
    manifest: null,
    checksums: null,
    written: new Map(),
    total: 0,
    count: 0,
  };
  if (targetDir !== null) {
    await mkdir(targetDir, { recursive: true, mode: 0o700 });
    await r.own(targetDir);
  }
  try {
    await eachEntry(archive, entries, (header, entry) => readEntry(r, header, entry));
  } catch (error) {
    entries.destroy();
    archive.destroy();
    throw readingFailure(error);
  }
  const manifest = checkedManifest(r);
  if (targetDir !== null) await forgetStateLeases(targetDir, options.ownerUid);
  return manifest;
}

/** OpenClaw's state database, relative to its state directory. */
const OPENCLAW_STATE_DB = 'state/openclaw.sqlite';

/**
 * A snapshot of a running gateway holds its leases (`state_leases` in OpenClaw's state database:
 * the gateway owner's, renewed while it runs, 5 minutes long). Unpacked for a new container, the
 * old one's lease would keep the new gateway from starting ("Another Gateway owner lease is still
 * active"): the process that held them is gone, so they are removed.
 */
async function forgetStateLeases(stateDir: string, ownerUid: number | undefined): Promise<void> {
  const path = join(stateDir, OPENCLAW_STATE_DB);
  if (
    !(await lstat(path).then(
      (s) => s.isFile(),
      () => false,
    ))
  )
    return;
  const { DatabaseSync } = await import('node:sqlite');
  let db: InstanceType<typeof DatabaseSync>;
  try {
    db = new DatabaseSync(path);
  } catch {
    return;
  }
  try {
    const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'state_leases'").get();
    if (table) db.exec('delete from state_leases');
  } catch {
    // Not a database OpenClaw could open either: it reports that itself.
  } finally {
    db.close();
  }
  if (ownerUid === undefined) return;
  for (const suffix of ['', '-wal', '-shm', '-journal'])
    await chown(`${path}${suffix}`, ownerUid, ownerUid).catch(() => undefined);
}
