import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where snapshot archives are kept, by snapshot id; the database row says what each is. */
export interface SnapshotStore {
  /** Stores the archive under `id` (whole, or not at all) and returns its size and SHA-256. */
  put(id: string, archive: Readable): Promise<{ sizeBytes: number; sha256: string }>;
  /** The stored archive; null when there is none. */
  open(id: string): Promise<Readable | null>;
  /** Removes it, and whatever a put of it that died left; nothing to remove is fine. */
  remove(id: string): Promise<void>;
  /** Lets go of its connections, where it holds some. */
  close?(): void;
}

const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

/** `<id>.tar.gz`, an archive's name in any store; ids are UUIDs, so no name reaches outside its place. */
export function archiveNameOf(id: string): string {
  if (!isUuid(id)) throw new Error('snapshot store: ids are UUIDs');
  return `${id}.tar.gz`;
}

/** A pass-through that counts and hashes the archive as it goes by; `result()` once it has all gone. */
export function archiveMeasure() {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _e, callback) {
      hash.update(chunk);
      sizeBytes += chunk.length;
      callback(null, chunk);
    },
  });
  return { stream, result: () => ({ sizeBytes, sha256: hash.digest('hex') }) };
}

/**
 * Archives as files of one directory (`<id>.tar.gz`, mode 600), written beside their place and
 * moved into it once complete, so a reader never sees half an archive.
 */
export function directorySnapshotStore(dir: string): SnapshotStore {
  const fileOf = (id: string) => join(dir, archiveNameOf(id));
  return {
    async put(id, archive) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const target = fileOf(id);
      const partial = `${target}.${randomBytes(6).toString('hex')}.partial`;
      const measure = archiveMeasure();
      try {
        await pipeline(archive, measure.stream, createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
        await rename(partial, target);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      return measure.result();
    },
    async open(id) {
      const stream = createReadStream(fileOf(id));
      return new Promise((resolve, reject) => {
        stream.once('open', () => resolve(stream));
        stream.once('error', (error: NodeJS.ErrnoException) =>
          error.code === 'ENOENT' ? resolve(null) : reject(error),
        );
      });
    },
    async remove(id) {
      const name = archiveNameOf(id);
      // A put killed mid-copy leaves its partial file: removed with the archive it was to become.
      const partials = (await readdir(dir).catch(() => [] as string[])).filter(
        (file) => file.startsWith(`${name}.`) && file.endsWith('.partial'),
      );
      for (const file of [name, ...partials]) await rm(join(dir, file), { force: true });
    },
  };
}
