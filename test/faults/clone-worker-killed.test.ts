import t from 'tap';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RESTORE_STAGING_PREFIX } from '@agentyard/runtime';
import { createUserRow, systemDb, useOwnDatabase } from '@agentyard/testing';
import { provisionJobId } from '../../services/agents/src/domain/runtime/provisioning.ts';
import { snapshotJobId } from '../../services/agents/src/domain/runtime/snapshots.ts';
import { execIn, web } from '../../services/agents/test/agents-harness.ts';
import { observe } from '../support/journey.ts';
import { AGENT_HOME as HOME, agentsServiceRun, entryAppears } from './agents-service-run.ts';
import { killWorkers } from './worker-process.ts';

// Issue 30, "tried against the faults a real system meets": the agents service is killed (SIGKILL)
// in the middle of cloning an agent: the clone's row made, its state being unpacked from the
// snapshot (killed when the snapshot's large file appears in the clone's state; 32 MiB that does
// not compress makes the unpacking seconds long). No one helps: a new service process starts, the
// agents worker runs on. Then the clone must run on the snapshot's whole state (seeded again from
// scratch) or be gone with its slot, never a half-seeded agent or a row left provisioning; the
// source runs on as it was, nothing staged stays, and a second clone works. The service and its
// worker run on this file's own queue prefix, runtime instance and snapshot directory; the minimal
// gateway image on the real engine.
const BALLAST_MIB = 32;
/** An agent's state folder is named by its id (beside it, other files of the agent). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
t.setTimeout(900_000);
// Its worker's reconciler settles agent rows of the whole database (restores, clones, snapshots a
// dead process left): a database of its own, so no other file's worker settles this file's rows, nor it theirs.
await useOwnDatabase(t);

t.test(
  'a service killed mid-clone: the clone runs on the whole snapshot state, the source untouched',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const run = await agentsServiceRun(t, {
      name: 'clonekill',
      ports: '40200-40299',
      // The reconciler's round: short, so the measured recovery is the lock's lease and one round, not a minute's wait.
      env: { RECONCILE_EVERY_MS: '5000' },
    });
    const { app, docker, provisioned, lifecycle } = run;
    await run.startWorker();
    const owner = await createUserRow({ plan: 'collective' });
    const res = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'origin', tier: 'starter' },
    });
    t.equal(res.statusCode, 201, res.body);
    const sourceId: string = res.json().agent.id;
    t.match(await provisioned.finished(provisionJobId(sourceId), 120_000), /^running/, 'the source agent runs');
    const agentRow = (id: string) =>
      systemDb().selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    const sourceContainer = (await agentRow(sourceId))!.container_id!;
    const sh = (containerId: string, script: string) => execIn(docker, containerId, ['sh', '-c', script]);
    t.equal(
      await sh(
        sourceContainer,
        `mkdir -p ${HOME}/workspace && cd ${HOME}/workspace && echo 'the green lamp' > MEMORY.md && head -c ${BALLAST_MIB * 1024 * 1024} /dev/urandom > ballast.bin && sha256sum ballast.bin > ballast.sha256`,
      ),
      0,
      `the source remembers something, with ${BALLAST_MIB} MiB that does not compress`,
    );
    const taken = await app.inject({
      method: 'POST',
      url: `/api/agents/${sourceId}/snapshots`,
      headers: web(owner),
      payload: { label: 'green' },
    });
    t.equal(taken.statusCode, 202, taken.body);
    const snapshotId: string = taken.json().snapshot.id;
    t.match(await lifecycle.finished(snapshotJobId(snapshotId), 300_000), /^taken/, 'the snapshot is taken');
    t.equal(
      await sh(sourceContainer, `echo 'written later' > ${HOME}/workspace/LATER.md`),
      0,
      'then the source writes on past the snapshot',
    );

    /** Which state a running agent has: read inside its container. */
    const stateOf = async (id: string) => {
      const row = await agentRow(id);
      if (!row) return 'gone';
      if (row.status !== 'running' || !row.container_id) return `${row.status}`;
      if ((await docker.getContainer(row.container_id).inspect()).State.Status !== 'running')
        return 'container not running';
      if ((await sh(row.container_id, `cd ${HOME}/workspace && sha256sum -c ballast.sha256 >/dev/null`)) !== 0)
        return 'torn: the ballast does not match its digest';
      const green = await sh(row.container_id, `grep -q 'the green lamp' ${HOME}/workspace/MEMORY.md`);
      const later = await sh(row.container_id, `test -e ${HOME}/workspace/LATER.md`);
      if (green === 0 && later !== 0) return 'the snapshot state';
      if (green === 0 && later === 0) return 'the source state past the snapshot';
      return `torn: memory ${green}, later ${later}`;
    };
    const staged = async (id: string) =>
      (await readdir(run.stateDirOf(id)).catch(() => [] as string[])).filter((name) =>
        name.startsWith(RESTORE_STAGING_PREFIX),
      );

    // The kill point: the clone's state being unpacked (the snapshot's large file appears in it).
    const service = await run.startService();
    const cloneFolder = entryAppears(run.stateRoot, (name) => UUID.test(name) && name !== sourceId);
    const answer = fetch(`${service.url}/api/agents/${sourceId}/clone`, {
      method: 'POST',
      headers: { ...web(owner), 'content-type': 'application/json' },
      body: JSON.stringify({ snapshotId, name: 'twin' }),
    }).then(
      (r) => `answered ${r.status}`,
      (error: Error) => `no answer: ${error.message}`,
    );
    const cloneId = await cloneFolder;
    await entryAppears(run.stateDirOf(cloneId), (name) => name === 'workspace');
    await entryAppears(join(run.stateDirOf(cloneId), 'workspace'), (name) => name === 'ballast.bin');
    await killWorkers([service.child]);
    const killedAt = performance.now();
    t.match(await answer, /^no answer/, 'the clone request got no answer: its process died');
    const killed = await agentRow(cloneId);
    t.has(
      killed,
      { status: 'provisioning', cloned_from_agent_id: sourceId },
      'killed mid-seeding: the clone is recorded, provisioning',
    );
    t.comment(
      `killed mid-clone: the clone's workspace ${JSON.stringify(await readdir(join(run.stateDirOf(cloneId), 'workspace')))}`,
    );

    // Nobody helps: the service starts again (as its supervisor would), the worker runs on.
    await run.startService();
    const outcome = await observe(
      // A container stopping as it is read (a provisioning attempt replacing it) is read again in the next look.
      () => stateOf(cloneId).catch((error: Error) => `container changing: ${error.message}`),
      (s) => s === 'gone' || s === 'error' || s.startsWith('the ') || s.startsWith('torn'),
      { everyMs: 500, deadlineMs: 240_000, what: 'the clone settled: running on a whole state, or gone' },
    );
    t.comment(
      `service killed mid-clone → the clone running on a whole state (${outcome}): ${Math.round(performance.now() - killedAt)} ms`,
    );
    t.equal(outcome, 'the snapshot state', 'the clone was finished: it runs on the snapshot state, whole');
    t.same(await staged(cloneId), [], 'nothing staged left in the clone state');
    t.same(
      (await readdir(run.snapshotDir)).filter((name) => name.endsWith('.partial')),
      [],
      'nothing half-written in the snapshot store',
    );
    const listed = await app.inject({ method: 'GET', url: `/api/agents/${cloneId}`, headers: web(owner) });
    t.has(listed.json(), { agent: { status: 'running' } }, 'the owner sees the clone running');
    t.equal(
      await stateOf(sourceId),
      'the source state past the snapshot',
      'the source runs on its own state, untouched',
    );
    t.equal((await agentRow(sourceId))!.container_id, sourceContainer, 'in the same container as before');

    // The owner carries on: a second clone of the same snapshot.
    const again = await app.inject({
      method: 'POST',
      url: `/api/agents/${sourceId}/clone`,
      headers: web(owner),
      payload: { snapshotId, name: 'twin-two' },
    });
    t.equal(again.statusCode, 201, again.body);
    const secondId: string = again.json().agent.id;
    t.match(await provisioned.finished(provisionJobId(secondId), 120_000), /^running/, 'a second clone works');
    t.equal(await stateOf(secondId), 'the snapshot state', 'on the snapshot state too');
    for (const id of [secondId, cloneId, sourceId])
      t.equal(
        (await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(owner) })).statusCode,
        200,
        'an agent is deleted',
      );
  },
);
