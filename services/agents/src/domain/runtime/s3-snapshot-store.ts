import { pipeline, Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { archiveMeasure, archiveNameOf, type SnapshotStore } from './snapshot-store.ts';

export interface S3SnapshotStoreOptions {
  bucket: string;
  region: string;
  /** An S3-compatible service (MinIO, Ceph, R2, a local test server), addressed path-style; unset: AWS S3. */
  endpoint?: string;
  /** Put before every key (`snapshots/`, say); keys are `<prefix><id>.tar.gz`. */
  prefix?: string;
  /** Unset: the SDK's default chain (environment, shared files, container or instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** The longest wait for a connection, for the answer to one request, and between two bytes of one exchange. */
  timeoutMs: number;
  /** Bytes of one multipart part (S3's least is 5 MiB). */
  partSizeBytes?: number;
  /** Parts sent at once: at most partSizeBytes × this many bytes of an archive are held in memory. */
  partsInFlight?: number;
}

const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/**
 * Archives as objects of one S3 bucket, streamed in as a multipart upload of bounded parts (a
 * failed one is aborted, so no object and no stray parts are left) and out as the object's body.
 * An object appears whole or not at all, as S3 writes it, so a reader never sees half an archive.
 */
export function s3SnapshotStore(options: S3SnapshotStoreOptions): SnapshotStore {
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint && { endpoint: options.endpoint, forcePathStyle: true }),
    ...(options.credentials && { credentials: options.credentials }),
    maxAttempts: 3,
    requestHandler: {
      connectionTimeout: Math.min(options.timeoutMs, 10_000),
      requestTimeout: options.timeoutMs,
      // Without it the SDK only logs a warning when requestTimeout passes.
      throwOnRequestTimeout: true,
      // Idle time on the socket, which also bounds a download whose body stops coming.
      socketTimeout: options.timeoutMs,
    },
  });
  const Bucket = options.bucket;
  const keyOf = (id: string) => `${options.prefix ?? ''}${archiveNameOf(id)}`;

  return {
    async put(id, archive) {
      const Key = keyOf(id);
      const measure = archiveMeasure();
      // The archive's failure reaches the upload through the measure (which then aborts), and the upload's reaches the archive's producer.
      pipeline(archive, measure.stream, () => undefined);
      const upload = new Upload({
        client,
        params: { Bucket, Key, Body: measure.stream, ContentType: 'application/gzip' },
        partSize: options.partSizeBytes ?? PART_BYTES,
        queueSize: options.partsInFlight ?? PARTS_IN_FLIGHT,
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } catch (error) {
        measure.stream.destroy();
        throw error;
      }
      return measure.result();
    },
    async open(id) {
      const Key = keyOf(id);
      try {
        const { Body } = await client.send(new GetObjectCommand({ Bucket, Key }));
        if (!(Body instanceof Readable)) throw new Error('snapshot store: S3 answered GetObject without a body stream');
        return Body;
      } catch (error) {
        // Only a missing key means no archive; a missing bucket (also a 404) is a misconfiguration to report.
        if (error instanceof NoSuchKey) return null;
        throw error;
      }
    },
    async remove(id) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: keyOf(id) }));
    },
    close() {
      client.destroy();
    },
  };
}
