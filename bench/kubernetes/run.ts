// An agent on Kubernetes against one on the container engine, through the same RuntimeDriver calls
// the platform makes: create → start → the gateway answers /readyz (provisioning), then stop →
// start → answers again (a wake from a hibernation stop). The minimal gateway image on both, so the
// figures are the drivers' and the orchestrators', not OpenClaw's boot. Rounds alternate between the
// two drivers; medians and the ratio come from the same run. Needs the cluster infra/kubernetes/up.sh
// runs (its kubeconfig: AGENTYARD_KUBECONFIG, else the one up.sh writes) and the engine `npm start`
// prepares (scripts/lib/extras.ts).
// Usage: npm run bench:kubernetes -- --rounds 5
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { probeAgent } from '@agentyard/agent-gateway';
import { createDockerDriver, createKubernetesDriver, type RuntimeDriver } from '@agentyard/runtime';
import { preparePlatformExtras } from '../../scripts/lib/extras.ts';
import { median, percentile } from '../rounds.ts';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(args.rounds);
const IMAGE = 'localhost/agentyard-gateway-minimal:1';
const STATE = process.env.AGENTYARD_K8S_STATE ?? '/var/lib/agentyard/kubernetes';
const kubeconfig = process.env.AGENTYARD_KUBECONFIG ?? join(STATE, 'admin.kubeconfig');
const MB = 1024 ** 2;

async function answers(url: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probeAgent(url, 1000)).ready) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One agent's provisioning and a wake from stop, in ms; everything it made is removed after. */
async function round(driver: RuntimeDriver, hostPort: () => Promise<number>): Promise<{ up: number; wake: number }> {
  const agentId = randomUUID();
  const t0 = Date.now();
  const id = await driver.create({
    agentId,
    userId: randomUUID(),
    image: IMAGE,
    hostPort: 0,
    config: JSON.stringify({ gateway: { port: 18789 } }),
    resources: { memoryBytes: 256 * MB, cpus: 0.25 },
  });
  try {
    await driver.start(id);
    await answers(driver.gatewayUrl(await hostPort(), agentId));
    const up = Date.now() - t0;
    await driver.stop(id);
    const t1 = Date.now();
    await driver.start(id);
    await answers(driver.gatewayUrl(await hostPort(), agentId));
    return { up, wake: Date.now() - t1 };
  } finally {
    await driver.remove(id);
    await driver.removeState(agentId);
  }
}

const env = { ...process.env, ...(await preparePlatformExtras({ ...process.env, NODE_ENV: 'test' })) };
if (env.RUNTIME_DRIVER !== 'docker') throw new Error('no container engine: this bench compares against it');
const configDir = await mkdtemp(join(tmpdir(), 'agentyard-bench-k8s-'));
const docker = createDockerDriver({
  dockerHost: env.DOCKER_HOST!,
  instance: `bench-${randomBytes(3).toString('hex')}`,
  defaultImage: IMAGE,
  publishHost: '127.0.0.1',
  pidsLimit: 256,
  stopTimeoutSeconds: 5,
  timeoutMs: 30_000,
  networkMode: env.RUNTIME_NETWORK_MODE ?? '',
  configDir,
});

const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const namespace = `agentyard-bench-${randomBytes(4).toString('hex')}`;
await core.createNamespace({ body: { metadata: { name: namespace } } });
const nodes = (await core.listNode()).items
  .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
  .map((n) => n.metadata!.name!);
const localDir = join(STATE, 'volumes', namespace);
await mkdir(localDir, { recursive: true, mode: 0o711 });
const kubernetes = createKubernetesDriver({
  kubeconfig,
  namespace,
  instance: `bench-${randomBytes(3).toString('hex')}`,
  defaultImage: IMAGE,
  timeoutMs: 30_000,
  stopTimeoutSeconds: 5,
  platformCidrs: ['10.245.0.0/24'],
  agentListeners: ['10.245.0.1:3002'],
  storage: { localDir, nodes },
  imagePullPolicy: 'Never',
});

const results = { docker: [] as { up: number; wake: number }[], kubernetes: [] as { up: number; wake: number }[] };
try {
  for (let i = 0; i < ROUNDS; i++) {
    // The engine publishes the gateway on a port of its choosing; a pod is reached at its IP.
    results.docker.push(
      await round(docker, async () => (await docker.list()).find((c) => c.state === 'running')?.hostPort ?? 0),
    );
    results.kubernetes.push(await round(kubernetes, async () => 0));
    console.log(
      `round ${i + 1}: engine up ${results.docker.at(-1)!.up} ms, wake ${results.docker.at(-1)!.wake} ms; kubernetes up ${results.kubernetes.at(-1)!.up} ms, wake ${results.kubernetes.at(-1)!.wake} ms`,
    );
  }
} finally {
  await docker.close();
  await kubernetes.close();
  await core.deleteNamespace({ name: namespace });
  await rm(localDir, { recursive: true, force: true });
  await rm(configDir, { recursive: true, force: true });
}

for (const what of ['up', 'wake'] as const) {
  const d = results.docker.map((r) => r[what]);
  const k = results.kubernetes.map((r) => r[what]);
  console.log(
    `${what === 'up' ? 'create → answering' : 'stop → start → answering'}: engine p50 ${median(d)} / p99 ${percentile(d, 99)} ms; kubernetes p50 ${median(k)} / p99 ${percentile(k, 99)} ms (${(median(k) / median(d)).toFixed(2)}×)`,
  );
}
