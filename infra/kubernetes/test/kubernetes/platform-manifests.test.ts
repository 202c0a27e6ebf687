import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  type V1ResourceQuota,
  type V1Secret,
} from '@kubernetes/client-node';
import t from 'tap';
import { contractConfig, gatewayReady } from '../../../../libs/runtime/test/driver-contract.ts';
import {
  clusterClients,
  GATEWAY_TEST_IMAGE as IMAGE,
  localStateDir,
  noCluster,
  readyNodes,
  testKubernetesDriver,
  watchUntil,
} from '../../../../libs/runtime/test/support/kubernetes-cluster.ts';
import {
  AGENTS_NAMESPACE,
  AGENTS_SERVICE_ACCOUNT,
  kustomizationObjects,
  LOCAL_STORAGE_DIR,
  PLATFORM_NAMESPACE,
  planClassOf,
} from '../platform-manifests.ts';

// The platform's manifests judged by a real API server (the cluster infra/kubernetes/up.sh runs):
// every object passes a server-side dry run; then the namespaces, RBAC, plans and quotas are
// applied for real under names of this run, and the agents' service account token runs the
// kubernetes driver with exactly those rights, and no more.
const MB = 1024 ** 2;
t.setTimeout(900_000);

const run = randomBytes(3).toString('hex');
const platformNs = `agentyard-${run}`;
const agentsNs = `agentyard-agents-${run}`;
const NAMESPACES: Record<string, string> = { [PLATFORM_NAMESPACE]: platformNs, [AGENTS_NAMESPACE]: agentsNs };
const CLUSTER_SCOPED = ['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass'];
/** Cluster-wide names of this run: the manifests' own names with the run appended. */
const ofRun = (name: string) => `${name}-${run}`;

type Manifest = KubernetesObject & Record<string, unknown>;

/** The object as this run applies it: its namespaces and cluster-wide names (and what refers to them) made unique. */
function forRun(source: Manifest): Manifest {
  const object = structuredClone(source) as Manifest & {
    metadata: { name: string; namespace?: string };
    subjects?: { namespace?: string }[];
    roleRef?: { kind: string; name: string };
    spec?: { scopeSelector?: { matchExpressions: { values: string[] }[] } };
  };
  if (object.kind === 'Namespace') object.metadata.name = NAMESPACES[object.metadata.name]!;
  else if (CLUSTER_SCOPED.includes(object.kind!)) object.metadata.name = ofRun(object.metadata.name);
  if (object.metadata.namespace) object.metadata.namespace = NAMESPACES[object.metadata.namespace]!;
  for (const subject of object.subjects ?? [])
    if (subject.namespace) subject.namespace = NAMESPACES[subject.namespace]!;
  if (object.roleRef?.kind === 'ClusterRole') object.roleRef.name = ofRun(object.roleRef.name);
  for (const expression of object.spec?.scopeSelector?.matchExpressions ?? [])
    expression.values = expression.values.map(ofRun);
  return object;
}

const codeOf = (error: unknown) => (error instanceof ApiException ? error.code : undefined);
const bodyOf = (error: unknown) => (error instanceof ApiException ? String(error.body) : String(error));

t.test('the platform manifests on a real API server', { skip: noCluster }, async (t) => {
  const { kc: admin, core } = clusterClients();
  const objectsApi = KubernetesObjectApi.makeApiClient(admin);
  const manifests = kustomizationObjects(LOCAL_STORAGE_DIR).map(({ object }) => forRun(object));
  const namespaces = manifests.filter((m) => m.kind === 'Namespace');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.teardown(async () => {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error: unknown) => t.comment(`cleanup: ${bodyOf(error)}`));
  });

  for (const namespace of namespaces) {
    await objectsApi.create(namespace);
    cleanups.push(() => core.deleteNamespace({ name: namespace.metadata!.name! }));
  }

  await t.test('every object passes a server-side dry run', async (t) => {
    for (const object of manifests.filter((m) => m.kind !== 'Namespace')) {
      const what = `${object.kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name}`;
      try {
        const created = await objectsApi.create(object, undefined, 'All');
        t.equal(created.metadata?.name, object.metadata?.name, `${what} is valid`);
        // A field this server's version drops would vanish here (preemptionPolicy is beta on 1.20).
        if (object.kind === 'PriorityClass')
          t.equal(
            (created as { preemptionPolicy?: string }).preemptionPolicy,
            'Never',
            `${what} keeps preemptionPolicy`,
          );
      } catch (error) {
        t.fail(`${what}: ${bodyOf(error)}`);
      }
    }
    // A dry run persists nothing.
    await t.rejects(
      objectsApi.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'edge', namespace: platformNs } }),
      { code: 404 },
    );
  });

  // What the driver needs to run: the service account, its roles and bindings; the plans and quotas.
  const APPLIED = [
    'ServiceAccount',
    'Role',
    'RoleBinding',
    'ClusterRole',
    'ClusterRoleBinding',
    'PriorityClass',
    'ResourceQuota',
    'LimitRange',
  ];
  for (const object of manifests.filter((m) => APPLIED.includes(m.kind!))) {
    await objectsApi.create(object);
    if (!object.metadata?.namespace) cleanups.push(() => objectsApi.delete(object));
  }

  // A token of the agents' service account: a token Secret (made by the token controller on 1.20, and asked for by hand on 1.24 and later).
  const tokenName = `${AGENTS_SERVICE_ACCOUNT}-token-${run}`;
  await core.createNamespacedSecret({
    namespace: platformNs,
    body: {
      metadata: { name: tokenName, annotations: { 'kubernetes.io/service-account.name': AGENTS_SERVICE_ACCOUNT } },
      type: 'kubernetes.io/service-account-token',
    },
  });
  const token = await watchUntil<V1Secret>(admin, `/api/v1/namespaces/${platformNs}/secrets`, tokenName, (s) =>
    Boolean(s.data?.token),
  );
  const cluster = admin.getCurrentCluster()!;
  const asAgents = new KubeConfig();
  asAgents.loadFromOptions({
    clusters: [cluster],
    users: [{ name: AGENTS_SERVICE_ACCOUNT, token: Buffer.from(token.data!.token!, 'base64').toString('utf8') }],
    contexts: [{ name: 'agents', cluster: cluster.name, user: AGENTS_SERVICE_ACCOUNT }],
    currentContext: 'agents',
  });
  const dir = await mkdtemp(join(tmpdir(), 'agentyard-k8s-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const agentsKubeconfig = join(dir, 'agents.kubeconfig');
  await writeFile(agentsKubeconfig, asAgents.exportConfig(), { mode: 0o600 });

  await t.test('with only its service account, the driver runs an agent in the agents’ namespace', async (t) => {
    const localDir = await localStateDir(agentsNs);
    cleanups.push(() => rm(localDir, { recursive: true, force: true }));
    // An agent left by a failed step: its `local` volume is cluster-wide (the namespaces take the rest).
    cleanups.push(() => core.deleteCollectionPersistentVolume({ labelSelector: `agentyard.instance=test-${run}` }));
    const driver = testKubernetesDriver({
      kubeconfig: agentsKubeconfig,
      namespace: agentsNs,
      instance: `test-${run}`,
      storage: { localDir, nodes: await readyNodes(core) },
    });
    t.teardown(() => driver.close());
    const agentId = randomUUID();
    const id = await driver.create({
      agentId,
      userId: randomUUID(),
      image: IMAGE,
      hostPort: 0,
      config: contractConfig('t'),
      resources: { memoryBytes: 256 * MB, cpus: 0.25 },
    });
    await driver.start(id);
    t.ok(await gatewayReady(driver.gatewayUrl(0, agentId), 240_000), 'the agent’s gateway answers');
    t.equal((await driver.inspect(id))?.state, 'running', 'inspect: running');
    t.same(
      (await driver.list()).map((c) => c.agentId),
      [agentId],
      'list: the agent',
    );
    const stats = await driver.stats(id);
    t.ok(stats && stats.memoryBytes > 0, 'stats through the kubelet (nodes/proxy)');
    t.ok(Array.isArray(await driver.logs?.(id, 10)), 'logs (pods/log)');
    await driver.stop(id);
    t.equal((await driver.inspect(id))?.state, 'stopped', 'inspect: stopped');
    await driver.remove(id);
    await driver.removeState(agentId);
    t.equal(await driver.inspect(id), null, 'removed');
    const apps = admin.makeApiClient(AppsV1Api);
    t.same((await apps.listNamespacedStatefulSet({ namespace: agentsNs })).items, [], 'no StatefulSet left');
    // A deleted claim may linger a moment for its protection finalizer: deleted is what counts.
    t.same(
      (await core.listNamespacedPersistentVolumeClaim({ namespace: agentsNs })).items.filter(
        (c) => !c.metadata?.deletionTimestamp,
      ),
      [],
      'no claim left',
    );
  });

  await t.test('and nothing more: refused in the platform’s namespace and cluster-wide', async (t) => {
    const core = asAgents.makeApiClient(CoreV1Api);
    const apps = asAgents.makeApiClient(AppsV1Api);
    const refused = async (what: string, call: () => Promise<unknown>) => {
      const code = await call().then(
        () => 200,
        (error: unknown) => codeOf(error),
      );
      t.equal(code, 403, `refused: ${what}`);
    };
    await refused('list secrets in the platform namespace', () => core.listNamespacedSecret({ namespace: platformNs }));
    await refused('read its own token secret', () =>
      core.readNamespacedSecret({ name: tokenName, namespace: platformNs }),
    );
    await refused('list secrets in the agents namespace (get by name only)', () =>
      core.listNamespacedSecret({ namespace: agentsNs }),
    );
    await refused('list secrets cluster-wide', () => core.listSecretForAllNamespaces());
    await refused('list pods in kube-system', () => core.listNamespacedPod({ namespace: 'kube-system' }));
    await refused('list pods in the platform namespace', () => core.listNamespacedPod({ namespace: platformNs }));
    await refused('create a StatefulSet in the platform namespace', () =>
      apps.createNamespacedStatefulSet({
        namespace: platformNs,
        body: {
          metadata: { name: 'intruder' },
          spec: {
            selector: { matchLabels: { a: 'b' } },
            serviceName: 'x',
            template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: IMAGE }] } },
          },
        },
      }),
    );
    await refused('create a pod directly in the agents namespace', () =>
      core.createNamespacedPod({
        namespace: agentsNs,
        body: { metadata: { name: 'intruder' }, spec: { containers: [{ name: 'c', image: IMAGE }] } },
      }),
    );
    await refused('list nodes', () => core.listNode());
    await refused('delete the agents namespace', () => core.deleteNamespace({ name: agentsNs }));
    await refused('change the quota of a plan', () =>
      core.deleteNamespacedResourceQuota({ name: planClassOf('starter'), namespace: agentsNs }),
    );
  });

  await t.test('a plan’s quota refuses its agent beyond the plan’s total', async (t) => {
    // The quota keeps its name in the run's namespace; the PriorityClass it selects is the run's.
    const quotaName = planClassOf('starter');
    const plan = ofRun(quotaName);
    // Quota admission needs the controller's first count of the quota.
    const quota = await watchUntil<V1ResourceQuota>(
      admin,
      `/api/v1/namespaces/${agentsNs}/resourcequotas`,
      quotaName,
      (q) => Boolean(q.status?.hard),
    );
    const memory = quota.spec!.hard!['limits.memory']!;
    const pod = (name: string, memoryLimit: string) => ({
      metadata: { name },
      spec: {
        priorityClassName: plan,
        containers: [
          {
            name: 'gateway',
            image: IMAGE,
            resources: { requests: { cpu: '1', memory: memoryLimit }, limits: { cpu: '1', memory: memoryLimit } },
          },
        ],
      },
    });
    const fits = await core.createNamespacedPod({ namespace: agentsNs, body: pod('fits', '2Gi'), dryRun: 'All' });
    t.equal(fits.spec?.priorityClassName, plan, `a starter agent of 2Gi is admitted (quota ${memory})`);
    const over = Number(/^(\d+)Gi$/.exec(memory)![1]) + 1;
    const refusal = await core.createNamespacedPod({ namespace: agentsNs, body: pod('too-much', `${over}Gi`) }).then(
      () => null,
      (error: unknown) => error,
    );
    t.equal(codeOf(refusal), 403, `a starter agent of ${over}Gi is refused`);
    t.match(bodyOf(refusal), new RegExp(`exceeded quota: ${quotaName}\\b`), 'by the starter plan’s quota');
  });
});
