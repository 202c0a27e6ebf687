import t from 'tap';
import { readdir } from 'node:fs/promises';
import { RESTORE_STAGING_PREFIX } from '@agentyard/runtime';
import { createUserRow, systemDb, useOwnDatabase } from '@agentyard/testing';
import { provisionJobId } from '../../services/agents/src/domain/runtime/provisioning.ts';
import { snapshotJobId } from '../../services/agents/src/domain/runtime/snapshots.ts';
import { execIn, web } from '../../services/agents/test/agents-harness.ts';
import { observe } from '../support/journey.ts';
import { AGENT_HOME as HOME, agentsServiceRun, entryAppears } from './agents-service-run.ts';
import { killWorkers } from './worker-process.ts';

// Issue 30, "tried against the faults a real system meets": the agents service is killed (SIGKILL)
// in the middle of restoring a running agent from a snapshot: its container stopped, the
// before-restore snapshot taken, the snapshot being unpacked beside the state (killed when the
// staging folder appears; 32 MiB that does not compress makes the unpacking seconds long). No one
// helps: a new service process starts, the agents worker runs on. Then the agent must run again on
// a whole state: the snapshot's (the restore finished) or its own before the restore (rolled back),
// never a mix of both, with no staging folder left, the outcome in its snapshot list, and a second
// restore working. The service and its worker run on this file's own queue prefix, runtime
// instance and snapshot directory; the minimal gateway image on the real engine.
const BALLAST_MIB = 32;
t.setTimeout(900_000);
// Its worker's reconciler settles agent rows of the whole database (restores, clones, snapshots a
// dead process left): a database of its own, so no other file's worker settles this file's rows, nor it theirs.
await useOwnDatabase(t);

t.test(
  'a service killed mid-restore: the agent runs again on one whole state, nothing half-unpacked stays',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const run = await agentsServiceRun(t, {
      name: 'restorekill',
      ports: '40100-40199',
      // The reconciler's round: short, so the measured recovery is the lock's lease and one round, not a minute's wait.
      env: { RECONCILE_EVERY_MS: '5000' },
    });
    const { app, docker, ours, provisioned, lifecycle } = run;
    await run.startWorker();
    const owner = await createUserRow({ plan: 'collective' });
    const res = await app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'torn', tier: 'starter' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id: string = res.json().agent.id;
    t.match(await provisioned.finished(provisionJobId(id), 120_000), /^running/, 'the agent runs');
    const running = async () => (await ours()).find((c) => c.State === 'running')?.Id ?? null;
    const sh = async (script: string) => execIn(docker, (await running())!, ['sh', '-c', script]);
    // Two generations of the state, each whole: a file only it has, and its own ballast with its digest.
    const generation = (name: string) =>
      `mkdir -p ${HOME}/workspace && cd ${HOME}/workspace && rm -f MEMORY.md LATER.md && echo '${name}' > ${name === 'the green lamp' ? 'MEMORY.md' : 'LATER.md'} && head -c ${BALLAST_MIB * 1024 * 1024} /dev/urandom > ballast.bin && sha256sum ballast.bin > ballast.sha256 && echo '${name}' > ballast.of`;
    t.equal(
      await sh(generation('the green lamp')),
      0,
      `the agent remembers something, with ${BALLAST_MIB} MiB that does not compress`,
    );
    const taken = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/snapshots`,
      headers: web(owner),
      payload: { label: 'green' },
    });
    t.equal(taken.statusCode, 202, taken.body);
    const snapshotId: string = taken.json().snapshot.id;
    t.match(await lifecycle.finished(snapshotJobId(snapshotId), 300_000), /^taken/, 'the snapshot is taken');
    t.equal(await sh(generation('written later')), 0, 'then the agent writes a later state over it');

    /** Which whole state the agent has, or what is torn: read inside its running container. */
    const generationNow = async () => {
      const id = await running();
      if (!id) return 'no running container';
      const memory = await execIn(docker, id, ['sh', '-c', `test -e ${HOME}/workspace/MEMORY.md`]);
      const later = await execIn(docker, id, ['sh', '-c', `test -e ${HOME}/workspace/LATER.md`]);
      const whole = await execIn(docker, id, [
        'sh',
        '-c',
        `cd ${HOME}/workspace && sha256sum -c ballast.sha256 >/dev/null`,
      ]);
      const green = await execIn(docker, id, ['sh', '-c', `grep -q 'the green lamp' ${HOME}/workspace/ballast.of`]);
      if (whole !== 0) return 'torn: the ballast does not match its digest';
      if (memory === 0 && later !== 0 && green === 0) return 'restored';
      if (memory !== 0 && later === 0 && green !== 0) return 'before the restore';
      return `torn: memory ${memory}, later ${later}, ballast of the green state ${green}`;
    };
    const stateDir = run.stateDirOf(id);
    const staging = async () => (await readdir(stateDir)).filter((name) => name.startsWith(RESTORE_STAGING_PREFIX));

    // The kill point: the snapshot being unpacked (its staging folder appears beside the state).
    const service = await run.startService();
    const stagingAppears = entryAppears(stateDir, (name) => name.startsWith(RESTORE_STAGING_PREFIX));
    const answer = fetch(`${service.url}/api/agents/${id}/restore`, {
      method: 'POST',
      headers: { ...web(owner), 'content-type': 'application/json' },
      body: JSON.stringify({ snapshotId }),
    }).then(
      (r) => `answered ${r.status}`,
      (error: Error) => `no answer: ${error.message}`,
    );
    await stagingAppears;
    await killWorkers([service.child]);
    const killedAt = performance.now();
    t.match(await answer, /^no answer/, 'the restore request got no answer: its process died');
    const containerId = (
      await systemDb().selectFrom('agents').select('container_id').where('id', '=', id).executeTakeFirstOrThrow()
    ).container_id!;
    t.comment(
      `killed mid-restore: container ${(await docker.getContainer(containerId).inspect()).State.Status}, staging ${JSON.stringify(await staging())}`,
    );

    // Nobody helps: the service starts again (as its supervisor would), the worker runs on.
    await run.startService();
    const outcome = await observe(
      // A container stopping as it is read (the rebuild replacing it) is read again in the next look.
      async () =>
        (await staging()).length
          ? 'staging left'
          : await generationNow().catch((error: Error) => `container changing: ${error.message}`),
      (g) => g === 'restored' || g === 'before the restore' || g.startsWith('torn'),
      { everyMs: 500, deadlineMs: 300_000, what: 'the agent running again on a whole state' },
    );
    t.comment(
      `service killed mid-restore → the agent running on a whole state (${outcome}): ${Math.round(performance.now() - killedAt)} ms`,
    );
    t.equal(outcome, 'restored', 'the restore was finished: the snapshot state, whole');
    const exits = await systemDb()
      .selectFrom('agent_events')
      .select(['kind', 'expected'])
      .where('agent_id', '=', id)
      .where('kind', 'in', ['exit', 'restarted'])
      .execute();
    // Taken for a crash, the stop was restarted on the torn state, or (the reconciler next) left the agent down.
    t.notOk(
      exits.some((e) => e.kind === 'restarted' || !e.expected),
      'the watchdog took the stop the restore made for no crash',
    );
    t.same(await staging(), [], 'no staging folder left beside the state');
    const agent = await app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(owner) });
    t.has(agent.json(), { agent: { status: 'running' } }, 'the agent is listed running');
    const listed = await app.inject({ method: 'GET', url: `/api/agents/${id}/snapshots`, headers: web(owner) });
    const snapshots: { reason: string; status: string }[] = listed.json().snapshots;
    t.ok(
      snapshots.some((s) => s.reason === 'before-restore' && s.status === 'ready'),
      'the owner sees the before-restore snapshot: the state the restore replaced is kept',
    );
    t.notOk(
      snapshots.some((s) => s.status === 'pending'),
      'no snapshot left pending',
    );

    // The owner carries on: another restore, back to the state before the first one.
    const before = snapshots.find((s) => s.reason === 'before-restore') as unknown as { id: string };
    const again = await app.inject({
      method: 'POST',
      url: `/api/agents/${id}/restore`,
      headers: web(owner),
      payload: { snapshotId: before.id },
    });
    t.equal(again.statusCode, 200, again.body);
    t.has(again.json(), { success: true, status: 'running' }, 'a second restore works');
    t.equal(await generationNow(), 'before the restore', 'and brings back the state the first one replaced');
    t.equal(
      (await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(owner) })).statusCode,
      200,
      'the agent is deleted',
    );
  },
);
