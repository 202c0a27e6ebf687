import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createQueues, QUEUES } from '@agentyard/queue';
import { parseKeyring } from '@agentyard/crypto';
import { createRuntimeDriver } from '@agentyard/runtime';
import { repoRoot } from '@agentyard/config';
import { createUserRow, systemDb } from '@agentyard/testing';
import { loadAgentsConfig } from '../src/config.ts';
import { agentOperations } from '../src/domain/runtime/agent-operations.ts';
import { agentSnapshots } from '../src/domain/runtime/privileged/snapshot-taking.ts';
import { directorySnapshotStore, archiveNameOf } from '../src/domain/runtime/snapshot-store.ts';
import { recordSnapshot, snapshotJobId, TAKE_SNAPSHOT_JOB } from '../src/domain/runtime/snapshots.ts';

// A snapshot no job or copy can take any more (a job BullMQ failed after stalling twice; an inline
// copy whose process died) stayed `pending` for good with its partial file. The reconciler's pass
// fails it once it is old enough, unless a job may still take it or a copy holds the agent's turn.
t.test('abandoned pending snapshots are failed and their partial files removed; live ones are left', async (t) => {
  const prefix = `${process.env.QUEUE_PREFIX ?? 'test'}-abandon${randomBytes(3).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'snapshots-'));
  const config = loadAgentsConfig({
    ...process.env,
    QUEUE_PREFIX: prefix,
    RUNTIME_INSTANCE: prefix,
    RUNTIME_DRIVER: 'process',
  });
  const driver = createRuntimeDriver({ ...config, RUNTIME_DATA_DIR: dir, RUNTIME_CONFIG_DIR: '', repoRoot });
  const redis = new Redis(config.REDIS_URL);
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix });
  t.teardown(async () => {
    await queues.get(QUEUES.lifecycle).obliterate({ force: true });
    await queues.close();
    redis.disconnect();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });
  const exclusive = agentOperations({ redis, prefix, waitMs: 200, log: { error() {} } });
  const snapshots = agentSnapshots({
    db: systemDb(),
    driver,
    keyring: parseKeyring(config.ENCRYPTION_KEYS),
    store: directorySnapshotStore(dir),
    exclusive,
    // No restore here: nothing is rebuilt.
    rebuild: () => Promise.reject(new Error('this test restores nothing')),
    remove: () => Promise.reject(new Error('this test clones nothing')),
    log: { warn() {} },
  });

  const user = await createUserRow({ plan: 'label' });
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'Kept',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `s-${randomUUID().slice(0, 8)}`,
    })
    .returning(['id', 'user_id'])
    .executeTakeFirstOrThrow();
  const pendingFor = async (ageMs: number) => {
    const row = await recordSnapshot(systemDb(), agent, 'manual');
    await systemDb()
      .updateTable('agent_snapshots')
      .set({ created_at: new Date(Date.now() - ageMs) })
      .where('id', '=', row.id)
      .execute();
    // What a copy killed mid-write leaves in the store.
    await writeFile(join(dir, `${archiveNameOf(row.id)}.${randomBytes(4).toString('hex')}.partial`), 'half');
    return row.id;
  };
  const statusOf = async (id: string) =>
    (await systemDb().selectFrom('agent_snapshots').select('status').where('id', '=', id).executeTakeFirstOrThrow())
      .status;
  const filesOf = async (id: string) => (await readdir(dir)).filter((file) => file.startsWith(archiveNameOf(id)));

  const orphaned = await pendingFor(3_600_000);
  const young = await pendingFor(1_000);
  // A job that will still take it (waiting on its backoff): not abandoned.
  const queued = await pendingFor(3_600_000);
  await queues.add(
    QUEUES.lifecycle,
    TAKE_SNAPSHOT_JOB,
    { snapshotId: queued },
    { jobId: snapshotJobId(queued), delay: 3_600_000 },
  );

  // A copy under way holds the agent's turn: nothing is failed while it does.
  let release!: () => void;
  let held!: Promise<void>;
  await new Promise<void>((started) => {
    held = exclusive(
      agent.id,
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
          started();
        }),
    );
  });
  t.equal(await snapshots.failAbandoned(queues, 600_000), 0, 'none while a copy holds the agent');
  t.equal(await statusOf(orphaned), 'pending', 'the old one is left to that copy');
  release();
  await held;

  t.equal(await snapshots.failAbandoned(queues, 600_000), 1, 'then one is abandoned');
  t.equal(await statusOf(orphaned), 'failed', 'the one no job or copy can take is failed');
  t.same(await filesOf(orphaned), [], 'and its partial file is gone');
  t.equal(await statusOf(young), 'pending', 'a young one is left (its job may not be queued yet)');
  t.equal((await filesOf(young)).length, 1, 'with its file');
  t.equal(await statusOf(queued), 'pending', 'one whose job waits is left to it');

  // Its job gone for good (failed after stalling twice): now it is abandoned too.
  const job = await queues.get(QUEUES.lifecycle).getJob(snapshotJobId(queued));
  await job!.remove();
  t.equal(await snapshots.failAbandoned(queues, 600_000), 1, 'once its job is gone');
  t.equal(await statusOf(queued), 'failed', 'it is failed');
  t.equal(await snapshots.failAbandoned(queues, 600_000), 0, 'and a second pass finds nothing more');
});
