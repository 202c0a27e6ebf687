import t from 'tap';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { QUEUES } from '@agentyard/queue';
import { snapshotLimitsOf } from '@agentyard/proto-schemas';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { SCHEDULED_SNAPSHOT_JOB, SNAPSHOT_SWEEP_JOB } from '../../src/domain/runtime/snapshots.ts';
import { startAgents, web } from '../agents-harness.ts';

// Scheduled snapshots (issue 30): the sweep finds each agent due once a period, each plan keeps its
// number of daily snapshots, an agent that has not run since its last snapshot is not copied again,
// and the owner's quota refuses more. Process agents (the minimal gateway) on a database of this
// file's own: the sweep looks at every agent of the database.
const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');

t.test('scheduled snapshots: one per period, the plan keeps its number, a stopped agent once, the quota', async (t) => {
  await useOwnDatabase(t);
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-snapshot-schedule-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: join(dataDir, 'runtime'),
    SNAPSHOT_DIR: join(dataDir, 'snapshots'),
    AGENT_IMAGE: gateway,
    AGENT_PORT_RANGE: '30900-30999',
  });
  const lifecycle = h.queues.get(QUEUES.lifecycle);
  let jobs = 0;
  const run = async (name: string, data: Record<string, unknown>) => {
    const job = await lifecycle.add(name, data, { jobId: `test-${name}-${++jobs}` });
    return h.lifecycleJob(job.id!);
  };
  const sweep = () => run(SNAPSHOT_SWEEP_JOB, {});

  const owner = await h.subscribedUser('solo');
  const provisioned = await h.app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: 'kept daily' },
  });
  const id: string = provisioned.json().agent.id;
  t.match(await h.provisioned(id), /^running/);
  const list = async () =>
    (await h.app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) })).json();
  const scheduledIds = async () =>
    (await list()).snapshots
      .filter((s: { reason: string }) => s.reason === 'scheduled')
      .map((s: { id: string }) => s.id);

  t.equal(await sweep(), '1 due', 'the sweep finds the new agent due');
  const [found] = (await lifecycle.getJobs(['waiting', 'active', 'completed', 'delayed', 'prioritized'])).filter(
    (j) => j.name === SCHEDULED_SNAPSHOT_JOB && j.data.agentId === id,
  );
  t.ok(found, "and queues the agent's job");
  t.match(await h.lifecycleJob(found!.id!), /^taken /, 'which takes the snapshot');
  t.equal(await sweep(), '0 due', 'a period later it is not due again');
  t.match((await list()).snapshots, [{ reason: /^scheduled$/, status: /^ready$/, sizeBytes: Number }]);
  const [first] = await scheduledIds();
  const archive = (snapshotId: string) => join(dataDir, 'snapshots', `${snapshotId}.tar.gz`);
  t.ok(existsSync(archive(first)), 'its archive in the store');

  const kept = snapshotLimitsOf('solo').scheduledKept;
  for (let i = 0; i < kept; i++) t.match(await run(SCHEDULED_SNAPSHOT_JOB, { agentId: id }), /^taken /);
  const scheduled = await scheduledIds();
  t.equal(scheduled.length, kept, `solo keeps the newest ${kept}`);
  t.notOk(scheduled.includes(first), 'the oldest is gone');
  t.notOk(existsSync(archive(first)), 'with its archive');
  t.ok(
    scheduled.every((snapshotId: string) => existsSync(archive(snapshotId))),
    'the kept ones are in the store',
  );
  t.same((await list()).quota, {
    usedBytes: (await list()).snapshots.reduce((sum: number, s: { sizeBytes: number }) => sum + s.sizeBytes, 0),
    quotaBytes: snapshotLimitsOf('solo').quotaBytes,
    scheduledKept: kept,
  });

  await h.runtime.stop(id);
  t.match(await run(SCHEDULED_SNAPSHOT_JOB, { agentId: id }), /^taken /, 'stopped: its state since it last ran, once');
  t.match(
    await run(SCHEDULED_SNAPSHOT_JOB, { agentId: id }),
    /^skipped: unchanged since snapshot /,
    'then not again while it does not run',
  );
  t.equal((await scheduledIds()).length, kept);

  // An archive of the owner's that fills the quota (its row is what the quota counts).
  const quotaBytes = snapshotLimitsOf('solo').quotaBytes;
  const filler = await systemDb()
    .insertInto('agent_snapshots')
    .values({
      agent_id: id,
      user_id: owner.id,
      reason: 'import',
      status: 'ready',
      size_bytes: quotaBytes,
      sha256: '0'.repeat(64),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const refused = await h.app.inject({
    method: 'POST',
    url: `/api/agents/${id}/snapshots`,
    headers: web(owner),
    payload: {},
  });
  t.equal(refused.statusCode, 429);
  t.match(refused.json(), { code: /^SNAPSHOT_QUOTA$/, quotaBytes, usedBytes: Number, error: /delete some first/ });
  t.ok(refused.json().usedBytes >= quotaBytes, 'with what the snapshots take');
  t.equal(
    (await list()).snapshots.filter((s: { reason: string }) => s.reason === 'manual').length,
    0,
    'and records nothing',
  );
  await h.runtime.start(id);
  t.equal(await run(SCHEDULED_SNAPSHOT_JOB, { agentId: id }), 'skipped: quota reached', 'the scheduled one waits too');
  await systemDb().deleteFrom('agent_snapshots').where('id', '=', filler.id).execute();
  t.equal(
    (await h.app.inject({ method: 'POST', url: `/api/agents/${id}/snapshots`, headers: web(owner), payload: {} }))
      .statusCode,
    202,
    'room again: taken',
  );
});
