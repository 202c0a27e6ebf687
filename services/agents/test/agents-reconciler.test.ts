import t from 'tap';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { createUserRow, systemDb } from '@agentyard/testing';
import { startAgents } from './agents-harness.ts';

// The reconciler: agents stuck in provisioning past the deadline end in error (nothing left
// running for them), and containers whose agent no longer exists are reported.
t.test('stuck provisioning → error; orphan containers reported', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-reconcile-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
  const h = await startAgents(t, { RUNTIME_DRIVER: 'process', RUNTIME_DATA_DIR: dataDir, AGENT_IMAGE: gateway, AGENT_PORT_RANGE: '37000-37099' });
  const user = await createUserRow();
  const stuck = await systemDb().insertInto('agents').values({
    user_id: user.id, name: 'stuck', status: 'provisioning', model: 'openrouter/auto', tools_profile: 'messaging',
    subdomain: `stuck-${randomUUID().slice(0, 8)}`, created_at: new Date(Date.now() - 3600_000), updated_at: new Date(),
  }).returning('id').executeTakeFirstOrThrow();
  const fresh = await systemDb().insertInto('agents').values({
    user_id: user.id, name: 'fresh', status: 'provisioning', model: 'openrouter/auto', tools_profile: 'messaging', subdomain: `fresh-${randomUUID().slice(0, 8)}`, updated_at: new Date(),
  }).returning('id').executeTakeFirstOrThrow();
  const orphanAgent = randomUUID();
  const orphan = await h.driver.create({ agentId: orphanAgent, userId: user.id, image: gateway, hostPort: 37050, config: '{}', resources: { memoryBytes: 1, cpus: 1 } });

  const result = await h.runtime.reconcile(600_000);
  t.same(result.timedOut, [stuck.id]);
  t.same(result.orphans.map((o) => [o.id, o.agentId]), [[orphan, orphanAgent]]);
  t.match(await h.agentRow(stuck.id), { status: 'error', last_error: 'Provisioning did not finish in time', container_id: null, host_port: null });
  t.equal((await h.agentRow(fresh.id))!.status, 'provisioning', 'an agent within the deadline is left alone');
});
