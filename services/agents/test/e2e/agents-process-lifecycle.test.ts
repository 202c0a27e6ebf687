import t from 'tap';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { startAgents } from '../agents-harness.ts';
import { lifecycleScenario } from '../agents-lifecycle-scenario.ts';

// The process driver runs the minimal gateway (the same probes, hooks and WebSocket as OpenClaw):
// the whole lifecycle in seconds, observed on the agent's own port and home directory.
t.test('process driver: the whole agent lifecycle', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-runtime-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
  const updatedGateway = join(dataDir, 'gateway-v2.mjs');
  await copyFile(gateway, updatedGateway);
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_PORT_RANGE: '32000-32999',
    AGENT_READY_TIMEOUT_MS: '30000',
  });
  const home = (agentId: string) => join(dataDir, h.config.RUNTIME_INSTANCE, agentId, 'home', '.openclaw');
  const reachable = async (agentId: string) => {
    const row = await h.agentRow(agentId);
    if (!row?.gateway_url) return false;
    return fetch(`${row.gateway_url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
  };

  await lifecycleScenario(
    t,
    h,
    {
      async state(agentId) {
        if ((await h.driver.list({ agentId })).length === 0) return 'absent';
        return (await reachable(agentId)) ? 'running' : 'stopped';
      },
      async image(agentId) {
        return (await h.driver.list({ agentId }))[0]?.image ?? null;
      },
      async writeMemory(agentId) {
        await writeFile(join(home(agentId), 'MEMORY.md'), 'the user likes tea');
      },
      async memoryExists(agentId) {
        return (await readdir(home(agentId)).catch(() => [] as string[])).includes('MEMORY.md');
      },
      configText: (agentId) => readFile(join(home(agentId), 'openclaw.json'), 'utf8'),
    },
    { good: updatedGateway, broken: join(dataDir, 'missing-gateway.mjs') },
  );
});
