import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDockerDriver } from '../../src/index.ts';
import { driverContract } from '../driver-contract.ts';

// The runtime contract on the machine's container engine: the same one the kubernetes driver passes
// (test/kubernetes/kubernetes-driver.test.ts).
const noEngine = process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine';
t.setTimeout(600_000);

/** A port free now on loopback (the engine publishes the gateway there). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

t.test('docker driver: the runtime contract', { skip: noEngine }, async (t) => {
  const configDir = await mkdtemp(join(tmpdir(), 'agentyard-contract-'));
  const driver = createDockerDriver({
    dockerHost: process.env.DOCKER_HOST!,
    instance: `contract-${randomBytes(4).toString('hex')}`,
    defaultImage: 'localhost/agentyard-gateway-minimal:1',
    publishHost: '127.0.0.1',
    pidsLimit: 256,
    stopTimeoutSeconds: 5,
    timeoutMs: 30_000,
    networkMode: process.env.RUNTIME_NETWORK_MODE ?? '',
    configDir,
  });
  t.teardown(async () => {
    for (const c of await driver.list()) {
      await driver.remove(c.id);
      await driver.removeState(c.agentId);
    }
    await driver.close();
    await rm(configDir, { recursive: true, force: true });
  });
  driverContract(t, {
    driver,
    image: 'localhost/agentyard-gateway-minimal:1',
    hostPort: freePort,
    readyTimeoutMs: 60_000,
  });
});
