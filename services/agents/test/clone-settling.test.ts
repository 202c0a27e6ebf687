import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueues, QUEUES } from '@agentyard/queue';
import { createUserRow, systemDb, useOwnDatabase } from '@agentyard/testing';
import { loadAgentsConfig } from '../src/config.ts';
import { enqueueProvisioning, provisionJobId } from '../src/domain/runtime/provisioning.ts';
import { createRuntimeContext } from '../src/domain/runtime/privileged/runtime-context.ts';

// Issue 30: the reconciler's `finishClones` settles a clone whose process died while seeding it
// (its row marked `seeding_snapshot_id`). The fault test (test/faults/clone-worker-killed.test.ts)
// only meets the re-seeding branch; these are the others, through the reconciler's own functions on
// the process driver: the snapshot gone (the clone removed: row, state, plan slot), provisioning
// already queued (only the mark cleared), and a clone re-seeded past the provisioning deadline
// (counted from its re-seeding, so the same round's deadline check does not fail it).
// The reconciler settles marked rows of the whole database: a database of this file's own, so no
// other file's worker (its own lock namespace and snapshot store) settles these rows, nor this file theirs.
await useOwnDatabase(t);

/** Older than the provisioning deadline (600 s), so older than one operation lease too. */
const LONG_AGO_MS = 660_000;

t.test(
  'finishClones: a gone snapshot removes the clone, a queued one keeps it, a late re-seed is not timed out',
  async (t) => {
    const own = `${process.env.QUEUE_PREFIX ?? 'test'}-clones${randomBytes(3).toString('hex')}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-clones-'));
    const snapshotDir = await mkdtemp(join(tmpdir(), 'agentyard-snapshots-'));
    const config = loadAgentsConfig({
      ...process.env,
      QUEUE_PREFIX: own,
      RUNTIME_INSTANCE: own,
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: dataDir,
      SNAPSHOT_STORE: 'directory',
      SNAPSHOT_DIR: snapshotDir,
    });
    const context = createRuntimeContext(config, { warn() {}, error() {} });
    const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: own });
    t.teardown(async () => {
      await queues.get(QUEUES.provisioning).obliterate({ force: true });
      await queues.close();
      await context.close();
      await rm(dataDir, { recursive: true, force: true });
      await rm(snapshotDir, { recursive: true, force: true });
    });
    const stateOf = (agentId: string) => context.driver.stateDirectory!(agentId)!.path;
    const agentRow = (id: string) =>
      systemDb().selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    const exists = (path: string) =>
      stat(path).then(
        () => true,
        () => false,
      );

    // Solo: one agent holds the plan's only slot. The source is stopped (holds none), so each clone
    // provisioning holds it.
    const owner = await createUserRow({ plan: 'solo' });
    const newAgent = (name: string, values: { status: 'stopped' | 'provisioning'; createdAgoMs?: number }) =>
      systemDb()
        .insertInto('agents')
        .values({
          user_id: owner.id,
          name,
          status: values.status,
          plan: 'solo',
          model: 'openrouter/auto',
          tools_profile: 'messaging',
          subdomain: `${name}-${randomUUID().slice(0, 8)}`,
          created_at: new Date(Date.now() - (values.createdAgoMs ?? 0)),
          updated_at: new Date(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    const source = await newAgent('source', { status: 'stopped' });
    await mkdir(join(stateOf(source.id), 'workspace'), { recursive: true });
    await writeFile(join(stateOf(source.id), 'workspace', 'MEMORY.md'), 'the green lamp\n');
    const snapshot = await context.snapshots.snapshotNow(source.id, 'manual', 'green');

    /** A clone its process left marked seeding `snapshotId`, made `createdAgoMs` ago, with half a state. */
    const abandonedClone = async (name: string, snapshotId: string, createdAgoMs = LONG_AGO_MS) => {
      const clone = await newAgent(name, { status: 'provisioning', createdAgoMs });
      await systemDb()
        .updateTable('agents')
        .set({ cloned_from_agent_id: source.id, cloned_from_snapshot_id: snapshotId, seeding_snapshot_id: snapshotId })
        .where('id', '=', clone.id)
        .execute();
      await mkdir(join(stateOf(clone.id), 'workspace'), { recursive: true });
      await writeFile(join(stateOf(clone.id), 'workspace', 'half.bin'), 'half of what was unpacked');
      return clone;
    };
    const slotRefused = () =>
      context.allowance.admit(source).then(
        () => 'admitted',
        (error: { statusCode?: number }) => `refused ${error.statusCode}`,
      );

    await t.test('its snapshot gone: the clone is removed, row, state and plan slot', async (t) => {
      const doomed = await context.snapshots.snapshotNow(source.id, 'manual', 'doomed');
      const clone = await abandonedClone('orphan', doomed.id);
      t.equal(await slotRefused(), 'refused 429', 'the clone holds the plan slot (the source could not start)');
      // Deleted meanwhile: its row and its archive.
      await systemDb().deleteFrom('agent_snapshots').where('id', '=', doomed.id).execute();
      await context.snapshotStore.remove(doomed.id);

      const outcome = await context.snapshots.finishClones(queues);
      t.same(outcome, { finished: [], removed: [clone.id] }, 'the clone is reported removed');
      t.equal(await agentRow(clone.id), undefined, 'its row is gone');
      t.equal(await exists(stateOf(clone.id)), false, 'its state is gone');
      t.equal(await slotRefused(), 'admitted', 'its plan slot is free: the source may start');
      t.equal(
        await queues.get(QUEUES.provisioning).getJobState(provisionJobId(clone.id)),
        'unknown',
        'no provisioning was queued for it',
      );
      t.same(
        await context.snapshots.finishClones(queues),
        { finished: [], removed: [] },
        'a second round finds nothing',
      );
    });

    await t.test('its provisioning already queued: only the mark is cleared', async (t) => {
      // Its process queued provisioning and died before clearing the mark: the seeding was whole.
      const clone = await abandonedClone('queued', snapshot.id);
      await writeFile(join(stateOf(clone.id), 'workspace', 'MEMORY.md'), 'the green lamp\n');
      await enqueueProvisioning(queues, clone.id);

      const outcome = await context.snapshots.finishClones(queues);
      t.same(outcome, { finished: [], removed: [] }, 'neither seeded again nor removed');
      t.match(
        await agentRow(clone.id),
        { status: 'provisioning', seeding_snapshot_id: null, provisioning_since: null },
        'the clone stays provisioning, its mark cleared',
      );
      t.equal(
        await readFile(join(stateOf(clone.id), 'workspace', 'half.bin'), 'utf8'),
        'half of what was unpacked',
        'its state is left as it is (a seeding again would have wiped it)',
      );
      t.equal(
        await queues.get(QUEUES.provisioning).getJobState(provisionJobId(clone.id)),
        'waiting',
        'its provisioning job waits on',
      );
      await context.runtime.remove(clone.id);
    });

    await t.test('seeded again past the provisioning deadline: not timed out in the same round', async (t) => {
      const clone = await abandonedClone('late', snapshot.id);
      // An agent provisioning as long, not a clone: the deadline still fails it.
      const stuck = await newAgent('stuck', { status: 'provisioning', createdAgoMs: LONG_AGO_MS });

      // The reconciler's round, in the worker's order: clones first, then the provisioning deadline.
      const clones = await context.snapshots.finishClones(queues);
      const { timedOut } = await context.runtime.reconcile(config.PROVISIONING_DEADLINE_MS);
      t.same(clones, { finished: [clone.id], removed: [] }, 'the clone is seeded again');
      t.same(timedOut, [stuck.id], 'only the agent that is not a fresh clone times out');
      t.match(
        await agentRow(clone.id),
        { status: 'provisioning', seeding_snapshot_id: null },
        'the clone provisions on',
      );
      t.equal(
        await readFile(join(stateOf(clone.id), 'workspace', 'MEMORY.md'), 'utf8'),
        'the green lamp\n',
        "on the snapshot's state",
      );
      t.equal(await exists(join(stateOf(clone.id), 'workspace', 'half.bin')), false, 'nothing half-seeded left');
      t.equal(
        await queues.get(QUEUES.provisioning).getJobState(provisionJobId(clone.id)),
        'waiting',
        'its provisioning is queued',
      );
      t.match(await agentRow(stuck.id), { status: 'error', last_error: 'Provisioning did not finish in time' });

      // Its deadline counts from the re-seeding: once that is as old, it times out as any agent does.
      await systemDb()
        .updateTable('agents')
        .set({ provisioning_since: new Date(Date.now() - LONG_AGO_MS) })
        .where('id', '=', clone.id)
        .execute();
      t.same(
        (await context.runtime.reconcile(config.PROVISIONING_DEADLINE_MS)).timedOut,
        [clone.id],
        'a deadline later, it times out',
      );
      for (const id of [clone.id, stuck.id]) await context.runtime.remove(id);
    });
  },
);
