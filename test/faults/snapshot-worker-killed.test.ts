import t from 'tap';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createUserRow, systemDb, useOwnDatabase } from '@agentyard/testing';
import { provisionJobId } from '../../services/agents/src/domain/runtime/provisioning.ts';
import { snapshotJobId } from '../../services/agents/src/domain/runtime/snapshots.ts';
import { execIn, web } from '../../services/agents/test/agents-harness.ts';
import { observe } from '../support/journey.ts';
import { AGENT_HOME as HOME, agentsServiceRun, entryAppears } from './agents-service-run.ts';
import { killWorkers } from './worker-process.ts';

// Issue 30, "tried against the faults a real system meets": the agents worker is killed (SIGKILL)
// in the middle of taking a snapshot of a running agent: the container frozen for the copy, half
// the archive written. The kill comes when the archive's partial file appears (an event of the
// store's directory); the state carries 32 MiB that does not compress, so the copy is seconds long
// and the worker is still in it. A new worker starts: BullMQ finds the job stalled and runs it again.
// Then the snapshot is ready with a whole archive, nothing half-written is left in the store, the
// agent runs (not frozen), its operation lock is free (another snapshot is taken), and restoring the
// snapshot brings its state back. The agents service and its worker run on this file's own queue
// prefix, runtime instance and snapshot directory; the minimal gateway image on the real engine.
const BALLAST_MIB = 32;
t.setTimeout(900_000);
// Its worker's reconciler settles agent rows of the whole database (restores, clones, snapshots a
// dead process left): a database of its own, so no other file's worker settles this file's rows, nor it theirs.
await useOwnDatabase(t);

t.test(
  'a worker killed mid-snapshot: the snapshot is taken again whole, the agent runs, nothing half-written stays',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const run = await agentsServiceRun(t, { name: 'snapkill', ports: '40000-40099' });
    const { app, docker, ours, snapshotDir, provisioned, lifecycle } = run;
    const first = await run.startWorker();
    const owner = await createUserRow({ plan: 'collective' });
    const res = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'frozen', tier: 'starter' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id: string = res.json().agent.id;
    t.match(await provisioned.finished(provisionJobId(id), 120_000), /^running/, 'the agent runs');
    const containerId = (
      await systemDb().selectFrom('agents').select('container_id').where('id', '=', id).executeTakeFirstOrThrow()
    ).container_id!;
    const container = docker.getContainer(containerId);
    const stateOfContainer = async () => (await container.inspect()).State.Status;
    const sh = (script: string) => execIn(docker, containerId, ['sh', '-c', script]);
    t.equal(
      await sh(
        `mkdir -p ${HOME}/workspace && cd ${HOME}/workspace && echo 'the green lamp' > MEMORY.md && head -c ${BALLAST_MIB * 1024 * 1024} /dev/urandom > ballast.bin && sha256sum ballast.bin > ballast.sha256`,
      ),
      0,
      `the agent remembers something, with ${BALLAST_MIB} MiB that does not compress`,
    );

    // The kill point: the snapshot's archive being written (its partial file appears in the store's directory).
    const partialAppears = entryAppears(snapshotDir, (name) => name.endsWith('.partial'));
    const taken = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/snapshots`,
      headers: web(owner),
      payload: { label: 'mid-copy' },
    });
    t.equal(taken.statusCode, 202, taken.body);
    const snapshotId: string = taken.json().snapshot.id;
    const partial = await partialAppears;
    await killWorkers([first]);
    const killedAt = performance.now();

    const row = () =>
      systemDb().selectFrom('agent_snapshots').selectAll().where('id', '=', snapshotId).executeTakeFirstOrThrow();
    t.ok(partial.startsWith(`${snapshotId}.tar.gz.`), 'the partial file is the snapshot being taken');
    t.same(await readdir(snapshotDir), [partial], 'killed mid-copy: only the partial archive, no whole one');
    t.equal((await row()).status, 'pending', 'the snapshot is not listed ready');
    t.equal(await stateOfContainer(), 'paused', 'the agent was frozen for the copy when the worker died');

    // A new worker: BullMQ's stalled-job check hands it the snapshot job again.
    await run.startWorker();
    const outcome = await lifecycle.finished(snapshotJobId(snapshotId), 300_000);
    t.match(outcome, /^taken/, 'the snapshot job ran again and took it');
    t.comment(
      `worker killed mid-snapshot → the snapshot ready: ${Math.round(performance.now() - killedAt)} ms (${outcome})`,
    );
    await observe(stateOfContainer, (s) => s === 'running', {
      everyMs: 250,
      deadlineMs: 300_000,
      what: 'the agent running again',
    });
    t.comment(`worker killed mid-snapshot → the agent running again: ${Math.round(performance.now() - killedAt)} ms`);

    const ready = await row();
    t.match(ready, { status: /^ready$/, size_bytes: /^\d+$/, sha256: /^[0-9a-f]{64}$/ }, 'the snapshot is ready');
    t.same(await readdir(snapshotDir), [`${snapshotId}.tar.gz`], 'one whole archive in the store, no partial one left');
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(join(snapshotDir, `${snapshotId}.tar.gz`)) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
    }
    t.same(
      { size, sha256: hash.digest('hex') },
      { size: Number(ready.size_bytes), sha256: ready.sha256 },
      'the archive is the one its row describes',
    );

    // The owner carries on: another snapshot (the agent's lock is free, the container runs: it is paused for the copy), then a restore.
    const again = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/snapshots`,
      headers: web(owner),
      payload: { label: 'after' },
    });
    t.equal(again.statusCode, 202, again.body);
    t.match(
      await lifecycle.finished(snapshotJobId(again.json().snapshot.id), 120_000),
      /^taken \(paused \d+ ms\)$/,
      'another snapshot is taken, the running agent paused for it',
    );
    t.equal(await sh(`rm ${HOME}/workspace/MEMORY.md && echo 'written later' > ${HOME}/later.txt`), 0);
    const restored = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/restore`,
      headers: web(owner),
      payload: { snapshotId },
    });
    t.equal(restored.statusCode, 200, restored.body);
    t.has(
      restored.json(),
      { success: true, snapshotId, status: 'running' },
      'restored from the snapshot the killed worker began',
    );
    const restoredSh = async (script: string) => {
      const running = (await ours()).find((c) => c.State === 'running')!.Id;
      return execIn(docker, running, ['sh', '-c', script]);
    };
    t.equal(await restoredSh(`grep -q 'the green lamp' ${HOME}/workspace/MEMORY.md`), 0, 'the memory is back');
    t.equal(await restoredSh(`cd ${HOME}/workspace && sha256sum -c ballast.sha256`), 0, 'the large file is back whole');
    t.not(await restoredSh(`test -e ${HOME}/later.txt`), 0, 'what came after the snapshot is gone');
    t.equal(
      (await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(owner) })).statusCode,
      200,
      'the agent is deleted',
    );
    t.same(await readdir(snapshotDir), [], 'its archives went with it');
  },
);
