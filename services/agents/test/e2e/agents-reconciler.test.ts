import t from 'tap';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { repoRoot } from '@agentyard/config';
import { createUserRow, systemDb } from '@agentyard/testing';
import { startAgents } from '../agents-harness.ts';

// The reconciler: agents stuck in provisioning past the deadline end in error (nothing left
// running for them), and containers whose agent no longer exists are reported. Test files run in
// parallel on one database: other files' workers reconcile it with the default 600 s deadline, and
// their agents may take a few minutes to provision. So this file's stuck agents are 585-590 s old
// and its calls' deadline 570 s: only these calls time them out, and no other file's agent that is
// still provisioning. Agents other files left in provisioning long ago may be timed out too, so
// the assertions look at this file's own agents.
const DEADLINE_MS = 570_000;

t.test('stuck provisioning → error; orphan containers reported', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-reconcile-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_PORT_RANGE: '37000-37099',
  });
  const user = await createUserRow();
  const stuck = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'stuck',
      status: 'provisioning',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `stuck-${randomUUID().slice(0, 8)}`,
      created_at: new Date(Date.now() - 590_000),
      updated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const fresh = await systemDb()
    .insertInto('agents')
    .values({
      user_id: user.id,
      name: 'fresh',
      status: 'provisioning',
      model: 'openrouter/auto',
      tools_profile: 'messaging',
      subdomain: `fresh-${randomUUID().slice(0, 8)}`,
      updated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const orphanAgent = randomUUID();
  const orphan = await h.driver.create({
    agentId: orphanAgent,
    userId: user.id,
    image: gateway,
    hostPort: 37050,
    config: '{}',
    resources: { memoryBytes: 1, cpus: 1 },
  });

  const result = await h.runtime.reconcile(DEADLINE_MS);
  t.ok(result.timedOut.includes(stuck.id), 'the stuck agent timed out');
  t.notOk(result.timedOut.includes(fresh.id), 'not the fresh one');
  t.same(
    result.orphans.map((o) => [o.id, o.agentId]),
    [[orphan, orphanAgent]],
  );
  t.match(await h.agentRow(stuck.id), {
    status: /^error$/,
    last_error: 'Provisioning did not finish in time',
    container_id: null,
    host_port: null,
  });
  t.equal((await h.agentRow(fresh.id))!.status, 'provisioning', 'an agent within the deadline is left alone');
});

t.test('an agent whose provisioning ends while the reconciler waits for its turn is left running', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-reconcile-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_PORT_RANGE: '37100-37199',
  });
  const user = await createUserRow();
  const stuckAgent = (name: string, ageMs: number) =>
    systemDb()
      .insertInto('agents')
      .values({
        user_id: user.id,
        name,
        status: 'provisioning',
        model: 'openrouter/auto',
        tools_profile: 'messaging',
        subdomain: `${name}-${randomUUID().slice(0, 8)}`,
        created_at: new Date(Date.now() - ageMs),
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  // The reconciler takes the oldest first: once `stuck` is in error, it has listed `late` as stuck too.
  const stuck = await stuckAgent('stuck', 590_000);
  const late = await stuckAgent('late', 585_000);
  // `late`'s provisioning job holds it (as another process would).
  const provisioning = await h.holdOperation(late.id);

  const reconciled = h.runtime.reconcile(DEADLINE_MS);
  while ((await h.agentRow(stuck.id))!.status !== 'error') await setTimeout(20);
  // Provisioning ends while the reconciler waits for its turn on `late`.
  await systemDb().updateTable('agents').set({ status: 'running' }).where('id', '=', late.id).execute();
  await provisioning.release();
  const { timedOut } = await reconciled;
  t.ok(timedOut.includes(stuck.id), 'the agent still provisioning timed out');
  t.notOk(timedOut.includes(late.id), 'not the one whose provisioning ended');
  t.equal((await h.agentRow(late.id))!.status, 'running', 'the other left running');
});
