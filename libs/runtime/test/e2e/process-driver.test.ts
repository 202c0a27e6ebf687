import t from 'tap';
import { randomUUID } from 'node:crypto';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeAgent } from '@agentyard/agent-gateway';
import { repoRoot } from '@agentyard/config';
import { createProcessDriver } from '../../src/index.ts';

const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');

async function ready(url: string, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await probeAgent(url, 500)).ready) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

t.test('process driver: a gateway that dies is restarted by its supervisor; stop ends both', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-process-driver-'));
  const driver = createProcessDriver({
    dataDir,
    instance: 'unit',
    defaultImage: gateway,
    nodeBinary: process.execPath,
    stopTimeoutSeconds: 5,
  });
  const agentId = randomUUID();
  const hostPort = 39000 + Math.floor(Math.random() * 900);
  const id = await driver.create({
    agentId,
    userId: randomUUID(),
    image: gateway,
    hostPort,
    config: JSON.stringify({ gateway: { port: 18789 } }),
    resources: { memoryBytes: 1, cpus: 1 },
  });
  t.teardown(async () => {
    await driver.remove(id);
    await rm(dataDir, { recursive: true, force: true });
  });
  await driver.start(id);
  const url = driver.gatewayUrl(hostPort, agentId);
  t.ok(await ready(url), "the gateway answers on the agent's own port");
  const config = JSON.parse(
    await readFile(join(dataDir, 'unit', agentId, 'home', '.openclaw', 'openclaw.json'), 'utf8'),
  );
  t.has(config.gateway, { bind: 'loopback', port: hostPort }, 'the config is rewritten for the host');

  const info = (await driver.inspect(id))!;
  const { pid: supervisorPid } = JSON.parse(
    await readFile(join(dataDir, 'unit', 'containers', `${id}.json`), 'utf8'),
  ) as { pid: number };
  const children = await readFile(`/proc/${supervisorPid}/task/${supervisorPid}/children`, 'utf8');
  const gatewayPid = Number(children.trim().split(' ')[0]);
  t.equal(info.state, 'running');
  process.kill(gatewayPid, 'SIGKILL');
  t.ok(await ready(url), 'the supervisor brought the gateway back');
  t.equal((await driver.inspect(id))!.state, 'running');
  t.ok((await driver.stats(id))!.memoryBytes > 0, 'stats of the gateway process');

  await driver.stop(id);
  t.equal((await driver.inspect(id))!.state, 'stopped');
  t.notOk((await probeAgent(url, 500)).live, 'stopped: nothing answers on the port');
  t.throws(() => process.kill(gatewayPid, 0), 'the old gateway is gone');
});
