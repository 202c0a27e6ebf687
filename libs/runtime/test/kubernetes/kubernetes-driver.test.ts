import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from '@agentyard/config';
import type { KubernetesDriverOptions, RuntimeDriver } from '../../src/index.ts';
import { contractConfig, driverContract, gatewayReady } from '../driver-contract.ts';
import {
  type ClusterClients,
  clusterClients,
  execIn,
  GATEWAY_TEST_IMAGE as IMAGE,
  kubeconfig,
  localStateDir,
  noCluster,
  podWhere,
  readyNodes as readyNodesOf,
  testKubernetesDriver,
} from '../support/kubernetes-cluster.ts';

// The kubernetes driver on the cluster infra/kubernetes/up.sh runs on this machine (Kubernetes 1.20.2
// built from Debian's source, containerd, two kubelets): the same contract as the docker driver,
// then what only a cluster shows (the objects an agent is made of, a drained node).
const MB = 1024 ** 2;
// Pods are scheduled, their sandboxes made and images unpacked on a shared 2-core machine.
t.setTimeout(900_000);

const { kc, core, apps, net } = kubeconfig ? clusterClients() : ({} as ClusterClients);
const readyNodes = kubeconfig ? await readyNodesOf(core) : [];

/** A namespace of this test file's own, removed with everything in it at the end. */
async function ownNamespace(
  t: Test,
  options: Partial<KubernetesDriverOptions> = {},
): Promise<{ namespace: string; driver: RuntimeDriver; localDir: string }> {
  const namespace = `agentyard-test-${randomBytes(4).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const localDir = await localStateDir(namespace);
  const driver = testKubernetesDriver({
    kubeconfig,
    namespace,
    instance: `test-${randomBytes(3).toString('hex')}`,
    storage: { localDir, nodes: readyNodes },
    ...options,
  });
  t.teardown(async () => {
    for (const c of await driver.list()) {
      await driver.remove(c.id);
      await driver.removeState(c.agentId);
    }
    await driver.close();
    await core.deleteNamespace({ name: namespace });
    await rm(localDir, { recursive: true, force: true });
  });
  return { namespace, driver, localDir };
}

/** A minimal gateway agent created and started by `driver`, answering: its container id and agent id. */
async function runningAgent(
  t: Test,
  driver: RuntimeDriver,
  egressHosts?: string[],
): Promise<{ id: string; agentId: string }> {
  const agentId = randomUUID();
  const id = await driver.create({
    agentId,
    userId: randomUUID(),
    image: IMAGE,
    hostPort: 0,
    config: contractConfig('t'),
    resources: { memoryBytes: 256 * MB, cpus: 0.25 },
    ...(egressHosts ? { egressHosts } : {}),
  });
  await driver.start(id);
  t.ok(await gatewayReady(driver.gatewayUrl(0, agentId), 240_000), 'running');
  return { id, agentId };
}

t.test('kubernetes driver: the runtime contract', { skip: noCluster }, async (t) => {
  const { driver } = await ownNamespace(t);
  driverContract(t, { driver, image: IMAGE, hostPort: async () => 0, readyTimeoutMs: 240_000 });
});

t.test(
  'an agent is a StatefulSet, a Secret, a headless Service and a NetworkPolicy, hardened and labelled',
  { skip: noCluster },
  async (t) => {
    const { driver, namespace } = await ownNamespace(t);
    const agentId = randomUUID();
    const userId = randomUUID();
    const provisioning = Date.now();
    const id = await driver.create({
      agentId,
      userId,
      image: IMAGE,
      hostPort: 0,
      config: contractConfig(randomBytes(8).toString('hex')),
      secretFiles: { 'telegram.token': 'secret-token-value' },
      resources: { memoryBytes: 384 * MB, cpus: 0.5, diskBytes: 1024 * MB },
    });
    await driver.start(id);
    t.ok(await gatewayReady(driver.gatewayUrl(0, agentId), 240_000), 'the gateway answers at its pod IP');
    t.comment(`provisioning to running on the cluster (create → gateway ready): ${Date.now() - provisioning} ms`);

    const set = await apps.readNamespacedStatefulSet({ name: id, namespace });
    t.equal(set.spec?.replicas, 1, 'one replica while started');
    t.equal(set.metadata?.labels?.['agentyard.agent-id'], agentId);
    t.equal(set.metadata?.labels?.['agentyard.user-id'], userId);
    t.notMatch(JSON.stringify(set.metadata?.labels), /@/, 'no email in any label');
    const pod = set.spec!.template.spec!;
    t.has(pod.securityContext, {
      runAsUser: 1000,
      runAsGroup: 1000,
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    t.equal(pod.automountServiceAccountToken, false, 'no service account token in the pod');
    const gateway = pod.containers[0]!;
    t.has(gateway.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    t.same(gateway.resources?.limits, { memory: String(384 * MB), cpu: '500m' }, 'limits from the plan');
    t.same(gateway.resources?.requests, gateway.resources?.limits, 'requests equal limits (guaranteed)');

    const service = await core.readNamespacedService({ name: id, namespace });
    t.equal(service.spec?.clusterIP, 'None', 'headless');
    const policy = await net.readNamespacedNetworkPolicy({ name: id, namespace });
    t.same(policy.spec?.policyTypes, ['Ingress', 'Egress']);
    t.same(
      policy.spec?.ingress?.[0]?._from?.map((f) => f.ipBlock?.cidr),
      ['10.245.0.0/24'],
      'ingress only from the platform',
    );
    t.same(
      policy.spec?.egress?.[0]?.to?.map((to) => to.ipBlock?.cidr),
      ['10.245.0.1/32'],
      "egress to the platform's agent listener (and DNS)",
    );
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: `state-${id}-0`, namespace });
    t.equal(claim.status?.phase, 'Bound', "the agent's state claim is bound");

    const podName = `${id}-0`;
    t.equal(
      (
        await execIn(kc, namespace, podName, ['cat', '/home/node/.openclaw/credentials/agentyard/telegram.token'])
      ).trim(),
      'secret-token-value',
      'the secret file is where the config names it',
    );
    t.equal((await execIn(kc, namespace, podName, ['id', '-u'])).trim(), '1000', 'the gateway runs as uid 1000');
    t.match(
      await execIn(kc, namespace, podName, ['sh', '-c', 'touch /probe 2>&1 || true']),
      /Read-only file system/,
      'the root filesystem is read-only',
    );
    t.equal(
      (await execIn(kc, namespace, podName, ['sh', '-c', 'grep ^CapEff /proc/self/status'])).trim(),
      'CapEff:\t0000000000000000',
      'no capabilities',
    );
  },
);

const oneNode = readyNodes.length < 2 && `one Ready node only (${readyNodes.join(', ')}): nowhere to move to`;

t.test(
  'a drained node: the agent comes back on the other node with its state',
  { skip: noCluster || oneNode },
  async (t) => {
    const { driver, namespace } = await ownNamespace(t);
    const { id, agentId } = await runningAgent(t, driver);
    const podName = `${id}-0`;
    const first = await core.readNamespacedPod({ name: podName, namespace });
    const from = first.spec!.nodeName!;
    // What the agent remembers: written by the gateway's own user into its state.
    await execIn(kc, namespace, podName, ['sh', '-c', 'echo "the owner likes tea" > /home/node/.openclaw/MEMORY.md']);

    const node = await core.readNode({ name: from });
    node.spec = { ...node.spec, unschedulable: true };
    await core.replaceNode({ name: from, body: node });
    t.teardown(async () => {
      const again = await core.readNode({ name: from });
      again.spec = { ...again.spec, unschedulable: false };
      await core.replaceNode({ name: from, body: again });
    });
    const moving = Date.now();
    // Drained: the node's pods are deleted (1.20 has no policy/v1 eviction); the StatefulSet makes it again.
    await core.deleteNamespacedPod({ name: podName, namespace });
    const moved = await podWhere(
      kc,
      namespace,
      podName,
      (p) => p.metadata?.uid !== first.metadata?.uid && Boolean(p.status?.containerStatuses?.[0]?.ready),
    );
    t.not(moved.spec?.nodeName, from, `moved from ${from} to ${moved.spec?.nodeName}`);
    t.comment(`drain to ready on the other node: ${Date.now() - moving} ms`);
    await driver.inspect(id);
    t.ok(await gatewayReady(driver.gatewayUrl(0, agentId), 60_000), 'the platform reaches it at its new pod IP');
    t.equal(
      (await execIn(kc, namespace, podName, ['cat', '/home/node/.openclaw/MEMORY.md'])).trim(),
      'the owner likes tea',
      'its memory came with it',
    );

    await driver.remove(id);
    await driver.removeState(agentId);
    const left = await Promise.all([
      apps.listNamespacedStatefulSet({ namespace }),
      core.listNamespacedPod({ namespace }),
      core.listNamespacedService({ namespace }),
      core.listNamespacedSecret({ namespace, fieldSelector: 'type=Opaque' }),
      core.listNamespacedPersistentVolumeClaim({ namespace }),
      net.listNamespacedNetworkPolicy({ namespace }),
    ]);
    t.same(
      left.map((l) => l.items.length),
      [0, 0, 0, 0, 0, 0],
      'deleted: nothing left in the namespace',
    );
  },
);

t.test(
  'events: a gateway that exits is reported from the pod watch, and the pod runs it again',
  { skip: noCluster },
  async (t) => {
    const { driver, namespace } = await ownNamespace(t);
    const { id, agentId } = await runningAgent(t, driver);
    const following = new AbortController();
    t.teardown(() => following.abort());
    const opened = Promise.withResolvers<void>();
    const events = driver.events!(following.signal, () => opened.resolve())[Symbol.asyncIterator]();
    /** The next event named `what` (`die`, `health healthy`); every event seen is kept in order. */
    const seen: string[] = [];
    const nextOf = async (what: string) => {
      for (;;) {
        const { value, done } = await events.next();
        if (done) throw new Error(`events ended before ${what}`);
        seen.push(value.kind === 'health' ? `health ${value.health}` : value.kind);
        if (seen.at(-1) === what) return value;
      }
    };
    const died = nextOf('die');
    await opened.promise;
    // The gateway is the container's first process: SIGTERM ends it (exit 0).
    await execIn(kc, namespace, `${id}-0`, ['kill', '1']);
    t.has(await died, { containerId: id, agentId, kind: 'die', exitCode: 0 }, 'its exit, as the engine reports one');
    t.has(
      await nextOf('health healthy'),
      { containerId: id, agentId, kind: 'health' },
      'ready again: reported as health (the platform follows the address on it)',
    );
    // Readiness lost with the exit when the API showed it: a kubelet may publish the restart and Ready together.
    t.match(
      seen.slice(seen.lastIndexOf('die') + 1).join(', '),
      /^(health unhealthy, )?health healthy$/,
      'after the exit: at most readiness lost, then back',
    );
    await podWhere(
      kc,
      namespace,
      `${id}-0`,
      (p) =>
        (p.status?.containerStatuses?.[0]?.restartCount ?? 0) > 0 && Boolean(p.status?.containerStatuses?.[0]?.ready),
    );
    const info = (await driver.inspect(id))!;
    t.equal(info.state, 'running', 'running again');
    t.match(info.lastExit, { exitCode: 0, oomKilled: false }, 'the last exit is in inspect');
  },
);

t.test(
  "config replaced in place (the Secret, synced into the running pod), the state directory, the plan's PriorityClass",
  { skip: noCluster },
  async (t) => {
    const { driver, namespace, localDir } = await ownNamespace(t);
    const agentId = randomUUID();
    const id = await driver.create({
      agentId,
      userId: randomUUID(),
      image: IMAGE,
      hostPort: 0,
      config: contractConfig('before'),
      resources: { memoryBytes: 256 * MB, cpus: 0.25, plan: 'starter' },
    });
    t.notOk(
      (await apps.readNamespacedStatefulSet({ name: id, namespace })).spec?.template.spec?.priorityClassName,
      'no PriorityClass unless asked',
    );
    await driver.start(id);
    t.ok(await gatewayReady(driver.gatewayUrl(0, agentId), 240_000), 'running');
    t.equal(await driver.readConfig!(id), contractConfig('before'), 'the config read back');
    t.same(
      driver.stateDirectory!(agentId),
      { path: join(localDir, agentId), ownerUid: 1000 },
      'local volumes: a directory of this host',
    );

    const podName = `${id}-0`;
    const uid = (await core.readNamespacedPod({ name: podName, namespace })).metadata?.uid;
    await driver.replaceConfig!(id, contractConfig('after'));
    t.equal(await driver.readConfig!(id), contractConfig('after'), 'the new config read back');
    // The kubelet writes a secret volume's files when it syncs the pod: no event says when, so asked until then.
    const deadline = Date.now() + 120_000;
    let inPod = '';
    while (inPod !== contractConfig('after') && Date.now() < deadline)
      inPod = await execIn(kc, namespace, podName, ['cat', '/run/agentyard/openclaw.json']);
    t.equal(inPod, contractConfig('after'), 'the running gateway’s config file is the new one');
    t.equal(
      (await core.readNamespacedPod({ name: podName, namespace })).metadata?.uid,
      uid,
      'the same pod: not restarted',
    );

    const planned = testKubernetesDriver({
      kubeconfig,
      namespace,
      instance: `test-${randomBytes(3).toString('hex')}`,
      storage: { storageClassName: 'agentyard-none' },
      planPriorityClasses: true,
    });
    t.teardown(() => planned.close());
    const other = randomUUID();
    const otherId = await planned.create({
      agentId: other,
      userId: randomUUID(),
      image: IMAGE,
      hostPort: 0,
      config: '{}',
      resources: { memoryBytes: 256 * MB, cpus: 0.25, plan: 'white_glove' },
    });
    t.equal(
      (await apps.readNamespacedStatefulSet({ name: otherId, namespace })).spec?.template.spec?.priorityClassName,
      'agentyard-plan-white-glove',
      "with planPriorityClasses: the plan's PriorityClass",
    );
    t.equal(planned.stateDirectory!(other), null, "a provisioner's volumes: out of the platform's reach");
    await planned.remove(otherId);
    await planned.removeState(other);
  },
);

t.test(
  'created again in place (an image update): the old pod goes first; an image the nodes lack fails the start at once',
  { skip: noCluster },
  async (t) => {
    const { driver, namespace } = await ownNamespace(t);
    const { id, agentId } = await runningAgent(t, driver);
    const podName = `${id}-0`;
    const first = await core.readNamespacedPod({ name: podName, namespace });
    const again = (image: string, words: string) =>
      driver.create({
        agentId,
        userId: randomUUID(),
        image,
        hostPort: 0,
        config: contractConfig(words),
        resources: { memoryBytes: 256 * MB, cpus: 0.25 },
      });

    // A new template: the create returns once the old pod is gone, so the start sees only the new one.
    t.equal(await again(IMAGE, 'second'), id, 'the same StatefulSet');
    t.equal(
      await core.readNamespacedPod({ name: podName, namespace }).then(
        () => 'there',
        () => 'gone',
      ),
      'gone',
      'the old pod is gone when the create returns',
    );
    await driver.start(id);
    const second = await core.readNamespacedPod({ name: podName, namespace });
    t.not(second.metadata?.uid, first.metadata?.uid, 'the start answers with a new pod');
    t.ok(await gatewayReady(driver.gatewayUrl(0, agentId), 240_000), 'which answers at its address');

    // An image no node holds (pull policy Never): the start fails with the kubelet's reason, not a readiness timeout.
    await again('localhost/agentyard-no-such-image:1', 'broken');
    const began = performance.now();
    await t.rejects(driver.start(id), /cannot start: ErrImageNeverPull/, 'the start fails, naming why');
    t.comment(`start of a missing image → refused: ${Math.round(performance.now() - began)} ms`);

    // Created again with the image it had (a rollback): it runs and answers.
    await again(IMAGE, 'back');
    await driver.start(id);
    t.ok(await gatewayReady(driver.gatewayUrl(0, agentId), 240_000), 'back on the image it had, answering');
    t.equal((await driver.inspect(id))?.image, IMAGE, 'inspect names that image');
  },
);

/** The control plane's address on the cluster's bridge: pods reach the host there. */
const HOST = '10.245.0.1';

/** A server on the bridge standing in for a channel's host: answers who called it (the proxy dials from the host). */
async function channelHost(t: Test): Promise<{ port: number; callers: string[] }> {
  const callers: string[] = [];
  const server = createServer((req, res) => {
    callers.push(req.socket.remoteAddress ?? '');
    res.end('channel');
  }).listen(0, HOST);
  await once(server, 'listening');
  t.teardown(() =>
    new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
  );
  return { port: (server.address() as AddressInfo).port, callers };
}

/** The real egress proxy (infra/egress-proxy) on the bridge, with grants, allowed to dial the bridge on `targetPort`. */
async function egressProxyOnBridge(t: Test, key: string, targetPort: number): Promise<string> {
  const probe = createServer().listen(0, HOST);
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const child = spawn(process.execPath, [join(repoRoot, 'infra/egress-proxy/egress-proxy.ts')], {
    env: {
      PATH: process.env.PATH,
      EGRESS_LISTEN_HOST: HOST,
      EGRESS_PROXY_PORT: String(port),
      EGRESS_ALLOWED_PORTS: String(targetPort),
      EGRESS_ALLOWED_ADDRESSES: '10.245.0.0/24',
      EGRESS_GRANT_KEY: key,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the egress proxy exited (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (String((JSON.parse(line) as { msg?: unknown }).msg).startsWith('egress proxy on')) resolve();
    });
  });
  return `http://${HOST}:${port}`;
}

t.test(
  "egress: the pod reaches its channel's host through the egress proxy with its grant, and nothing else",
  { skip: noCluster },
  async (t) => {
    const key = randomBytes(32).toString('base64url');
    const channel = await channelHost(t);
    const proxy = await egressProxyOnBridge(t, key, channel.port);
    // Nothing reached directly: the channel's host is on the same bridge as the proxy.
    const { driver, namespace } = await ownNamespace(t, { egressProxy: { url: proxy, direct: [], grantKey: key } });
    const { id } = await runningAgent(t, driver, [HOST]);
    // Node's fetch in the pod, reading the proxy environment as the gateway does (NODE_USE_ENV_PROXY).
    const fetchFromPod = (url: string) =>
      execIn(kc, namespace, `${id}-0`, [
        'node',
        '-e',
        `fetch(${JSON.stringify(url)}).then((r) => console.log(r.status), (e) => console.log('failed', e.cause?.cause?.message ?? e.cause?.code ?? e.name))`,
      ]).then((out) => out.trim());
    t.equal(await fetchFromPod(`http://${HOST}:${channel.port}/getMe`), '200', 'its channel host answers');
    t.same(channel.callers, [HOST], 'through the proxy on the host, not from the pod');
    // Node tunnels http:// through the proxy too (CONNECT): a refusal fails the fetch with the proxy's status.
    t.match(
      await fetchFromPod(`http://10.245.0.2:${channel.port}/getMe`),
      /^failed Proxy response \(403\)/,
      'a host outside its grant: refused by the proxy',
    );
    t.equal(channel.callers.length, 1, 'nothing else reached it');
  },
);
