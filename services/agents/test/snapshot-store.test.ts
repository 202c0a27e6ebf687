import t, { type Test } from 'tap';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, watch } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { startS3Server } from '@agentyard/testing';
import { loadAgentsConfig } from '../src/config.ts';
import { configuredSnapshotStore } from '../src/domain/runtime/privileged/runtime-context.ts';
import { s3SnapshotStore } from '../src/domain/runtime/s3-snapshot-store.ts';
import { directorySnapshotStore, type SnapshotStore } from '../src/domain/runtime/snapshot-store.ts';

// One contract, two stores: a directory, and an S3 bucket on a local server speaking the S3 wire
// (libs/testing/src/s3-server.ts) to the real AWS SDK. Archives larger than one part (5 MiB here)
// so the S3 store's multipart upload is what is tested.
const MiB = 1024 * 1024;
const PART = 5 * MiB;

/** `bytes` random bytes in 64 KiB chunks, breaking off with an error after `failAfter` of them. */
function archiveOf(bytes: number, failAfter?: number) {
  const hash = createHash('sha256');
  let sent = 0;
  const stream = new Readable({
    read() {
      if (failAfter !== undefined && sent >= failAfter) return this.destroy(new Error('the archive broke off'));
      if (sent >= bytes) return void this.push(null);
      const chunk = randomBytes(Math.min(64 * 1024, bytes - sent));
      hash.update(chunk);
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, sha256: () => hash.digest('hex') };
}

async function measured(stream: Readable) {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    sizeBytes += (chunk as Buffer).length;
  }
  return { sizeBytes, sha256: hash.digest('hex') };
}

interface StoreUnderTest {
  store: SnapshotStore;
  /** Whether the backing place holds the archive `id` under its expected name. */
  holds(id: string): boolean;
  /** Anything the store left in its place: files, objects, unfinished uploads. */
  leftovers(): Promise<string[]>;
  /** Checks particular to this store after a put of `bytes` bytes. */
  afterPut?(t: Test, id: string, bytes: number): void;
}

const stores: Record<string, (t: Test) => Promise<StoreUnderTest>> = {
  async directory(t) {
    const dir = await mkdtemp(join(tmpdir(), 'snapshot-store-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    return {
      store: directorySnapshotStore(dir),
      holds: (id) => existsSync(join(dir, `${id}.tar.gz`)),
      leftovers: () => readdir(dir),
    };
  },
  async s3(t) {
    const server = await startS3Server();
    t.teardown(() => server.close());
    const store = s3SnapshotStore({
      bucket: server.bucket,
      region: server.region,
      endpoint: server.url,
      prefix: 'snapshots/',
      credentials: server.credentials,
      timeoutMs: 5000,
      partSizeBytes: PART,
    });
    t.teardown(() => store.close?.());
    return {
      store,
      holds: (id) => server.objects().has(`snapshots/${id}.tar.gz`),
      leftovers: async () => [
        ...server.objects().keys(),
        ...server.uploadsInProgress().map((u) => `unfinished upload of ${u.key} (${u.parts} parts)`),
      ],
      afterPut(t, id, bytes) {
        const key = `snapshots/${id}.tar.gz`;
        const operations = server.requests.filter((r) => r.key === key && r.status < 300).map((r) => r.operation);
        t.equal(
          operations.filter((o) => o === 'UploadPart').length,
          Math.ceil(bytes / PART),
          'sent as a multipart upload, part by part',
        );
        t.equal(operations.at(-1), 'CompleteMultipartUpload');
        t.equal(server.objects().get(key)?.length, bytes, 'one object of the whole archive');
      },
    };
  },
};

for (const [name, make] of Object.entries(stores)) {
  t.test(`the ${name} store`, async (t) => {
    const { store, holds, leftovers, afterPut } = await make(t);

    await t.test('an archive larger than a part comes back byte for byte, with its size and SHA-256', async (t) => {
      const id = randomUUID();
      const bytes = 2 * PART + 123_457;
      const archive = archiveOf(bytes);
      const stored = await store.put(id, archive.stream);
      t.same(stored, { sizeBytes: bytes, sha256: archive.sha256() });
      t.ok(holds(id), 'kept as <id>.tar.gz');
      afterPut?.(t, id, bytes);
      const opened = await store.open(id);
      t.ok(opened);
      t.same(await measured(opened!), stored, 'what is read back is what was put');
    });

    await t.test('an unknown id opens as null', async (t) => {
      t.equal(await store.open(randomUUID()), null);
    });

    await t.test('removed, it opens as null; removing what is gone is fine', async (t) => {
      const id = randomUUID();
      await store.put(id, archiveOf(1000).stream);
      const there = await store.open(id);
      t.ok(there, 'there before');
      there?.destroy();
      await store.remove(id);
      t.equal(await store.open(id), null);
      t.notOk(holds(id));
      await t.resolves(store.remove(id));
    });

    await t.test('an archive that breaks off leaves nothing behind', async (t) => {
      const before = await leftovers();
      for (const [when, failAfter] of [
        ['within its first part', MiB],
        ['after a part was sent', PART + 2 * MiB],
      ] as const) {
        const id = randomUUID();
        await t.rejects(
          store.put(id, archiveOf(3 * PART, failAfter).stream),
          /the archive broke off/,
          `broken off ${when}: the put fails with its error`,
        );
        t.equal(await store.open(id), null, 'and nothing opens');
        t.same(await leftovers(), before, 'no file, object or unfinished upload is left');
      }
    });

    await t.test('ids are UUIDs: anything else is refused before the store is touched', async (t) => {
      const before = await leftovers();
      for (const id of ['../escape', 'a/b', '', `${randomUUID()}/x`, `${randomUUID()}.partial`]) {
        await t.rejects(store.put(id, archiveOf(10).stream), /ids are UUIDs/, `put ${JSON.stringify(id)}`);
        await t.rejects(store.open(id), /ids are UUIDs/, `open ${JSON.stringify(id)}`);
        await t.rejects(store.remove(id), /ids are UUIDs/, `remove ${JSON.stringify(id)}`);
      }
      t.same(await leftovers(), before);
    });

    // What is left after every subtest above: only the archive of the first one.
    t.equal((await leftovers()).length, 1);
  });
}

t.test('the directory store: removing an id removes what a put of it that died left half-written', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'snapshot-store-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = directorySnapshotStore(dir);
  const [dead, other, kept] = [randomUUID(), randomUUID(), randomUUID()];
  await store.put(kept, archiveOf(1000).stream);
  // Two puts that never finish, as a worker killed mid-copy leaves them: their partial files.
  const seen = new Set<string>();
  const partialsAppear = new Promise<string[]>((resolve) => {
    const watcher = watch(dir, (_event, name) => {
      if (name?.endsWith('.partial')) seen.add(name);
      if (seen.size === 2) {
        watcher.close();
        resolve([...seen]);
      }
    });
  });
  const hanging = [dead, other].map((id) => {
    const stream = new Readable({ read() {} });
    stream.push(randomBytes(1000));
    return { stream, put: store.put(id, stream).catch(() => undefined) };
  });
  const partials = await partialsAppear;
  t.ok(partials.some((f) => f.startsWith(`${dead}.tar.gz.`)));
  await store.remove(dead);
  t.same(
    (await readdir(dir)).sort(),
    [`${kept}.tar.gz`, ...partials.filter((f) => f.startsWith(`${other}.`))].sort(),
    "its partial file is gone; another id's files stay",
  );
  for (const { stream, put } of hanging) {
    stream.destroy(new Error('killed'));
    await put;
  }
});

t.test('the S3 store: timeouts, credentials and a missing bucket', async (t) => {
  const server = await startS3Server();
  t.teardown(() => server.close());
  const storeWith = (options: Partial<Parameters<typeof s3SnapshotStore>[0]>) => {
    const store = s3SnapshotStore({
      bucket: server.bucket,
      region: server.region,
      endpoint: server.url,
      credentials: server.credentials,
      timeoutMs: 5000,
      ...options,
    });
    t.teardown(() => store.close?.());
    return store;
  };

  await t.test('wrong credentials are refused, and nothing is stored', async (t) => {
    const store = storeWith({
      credentials: { accessKeyId: server.credentials.accessKeyId, secretAccessKey: 'not-the-secret-access-key' },
    });
    await t.rejects(store.put(randomUUID(), archiveOf(1000).stream), { name: /^SignatureDoesNotMatch$/ });
    t.same([...server.objects().keys()], []);
  });

  await t.test('a missing bucket is an error, not a missing archive', async (t) => {
    await t.rejects(storeWith({ bucket: 'no-such-bucket' }).open(randomUUID()), { name: /^NoSuchBucket$/ });
  });

  await t.test('a server that stops answering fails the call after the timeout', async (t) => {
    // Bounded here, so a store without timeouts fails this test instead of hanging the file.
    t.setTimeout(30_000);
    const store = storeWith({ timeoutMs: 300 });
    const id = randomUUID();
    await store.put(id, archiveOf(100_000).stream);
    server.stall('bodies');
    const opened = await store.open(id);
    t.ok(opened, 'the answer began');
    await t.rejects(measured(opened!), { name: /^TimeoutError$/ }, 'a download whose bytes stop coming fails');
    server.stall('answers');
    const started = performance.now();
    await t.rejects(store.open(id), { name: /^TimeoutError$/ }, 'a request without an answer fails');
    await t.rejects(store.remove(id), { name: /^TimeoutError$/ });
    t.ok(performance.now() - started < 10_000, 'within the attempts and their timeouts');
  });
});

t.test('SNAPSHOT_STORE=s3: the service keeps archives in the bucket its settings name', async (t) => {
  const server = await startS3Server({ bucket: 'agentyard-test-archives', region: 'eu-central-1' });
  t.teardown(() => server.close());
  const config = loadAgentsConfig({
    ...process.env,
    SNAPSHOT_STORE: 's3',
    SNAPSHOT_S3_BUCKET: server.bucket,
    SNAPSHOT_S3_REGION: server.region,
    SNAPSHOT_S3_ENDPOINT: server.url,
    SNAPSHOT_S3_PREFIX: 'agents/snapshots/',
    SNAPSHOT_S3_ACCESS_KEY_ID: server.credentials.accessKeyId,
    SNAPSHOT_S3_SECRET_ACCESS_KEY: server.credentials.secretAccessKey,
  });
  const store = configuredSnapshotStore(config);
  t.teardown(() => store.close?.());
  const id = randomUUID();
  const archive = archiveOf(70_000);
  const stored = await store.put(id, archive.stream);
  t.same(stored, { sizeBytes: 70_000, sha256: archive.sha256() });
  t.same(
    [...server.objects().keys()],
    [`agents/snapshots/${id}.tar.gz`],
    'under the prefix, in that bucket and region, with those credentials',
  );
  t.same(await measured((await store.open(id))!), stored);
});
