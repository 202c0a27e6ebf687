import t from 'tap';
import { verifyEgressGrant } from '../../src/egress-grant.ts';
import type { KubernetesDriverOptions } from '../../src/kubernetes/cluster.ts';
import {
  agentSecret,
  claimOf,
  localVolume,
  nameOf,
  networkPolicy,
  statefulSet,
} from '../../src/kubernetes/manifests.ts';

// The objects an agent is made of, as the driver sends them; the kubernetes tier checks them on a cluster.
const options: KubernetesDriverOptions = {
  kubeconfig: '',
  namespace: 'agents',
  instance: 'ay',
  defaultImage: 'img',
  timeoutMs: 15_000,
  stopTimeoutSeconds: 10,
  platformCidrs: ['10.245.0.0/24'],
  agentListeners: ['10.245.0.1:3002'],
  storage: { storageClassName: 'fast' },
  planPriorityClasses: true,
};
const agentId = '7f0c8a52-3d47-4b7e-9d0e-5b0c3c0e1a11';
const userId = '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed';
const spec = {
  agentId,
  userId,
  image: 'localhost/agentyard-openclaw:1',
  hostPort: 0,
  config: '{"gateway":{}}',
  secretFiles: { 'telegram.token': 'secret-token' },
  resources: { memoryBytes: 2 * 1024 ** 3, cpus: 1.5, diskBytes: 5 * 1024 ** 3, plan: 'white_glove' },
};
const name = nameOf(agentId);

t.test('the StatefulSet: one hardened pod at the plan size, stopped until started', async (t) => {
  const set = statefulSet(options, name, spec);
  t.equal(set.spec?.replicas, 0, 'made stopped: start scales it to one');
  const pod = set.spec!.template.spec!;
  t.has(pod, {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 10,
    priorityClassName: 'agentyard-plan-white-glove',
    securityContext: {
      runAsUser: 1000,
      runAsGroup: 1000,
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    },
  });
  const [gateway] = pod.containers;
  t.has(gateway!.securityContext, {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    privileged: false,
    capabilities: { drop: ['ALL'] },
  });
  t.same(gateway!.resources, {
    requests: { memory: String(2 * 1024 ** 3), cpu: '1500m' },
    limits: { memory: String(2 * 1024 ** 3), cpu: '1500m' },
  });
  t.same(set.spec!.volumeClaimTemplates![0]!.spec!.storageClassName, 'fast');
  t.equal(set.spec!.volumeClaimTemplates![0]!.spec!.resources!.requests!.storage, String(5 * 1024 ** 3));
  // Labels say owner and agent by id, never anything the owner typed.
  t.same(
    Object.values(set.metadata!.labels!).sort(),
    [agentId, 'agentyard', 'agentyard-agent', 'ay', 'true', userId].sort(),
  );
  // The secret files alone in their own volume: an empty item list would project the config too.
  const secrets = pod.volumes!.find((volume) => volume.name === 'secrets');
  t.same(secrets?.secret?.items, [{ key: 'secret.telegram.token', path: 'telegram.token' }]);
  t.notOk(
    statefulSet(options, name, { ...spec, secretFiles: {} }).spec!.template.spec!.volumes!.some(
      (v) => v.name === 'secrets',
    ),
    'no secret files: no secrets volume',
  );
  t.notOk(
    statefulSet({ ...options, planPriorityClasses: false }, name, spec).spec!.template.spec!.priorityClassName,
    'no PriorityClass unless the cluster has them',
  );
});

t.test('the Secret holds the config and each secret file, base64', async (t) => {
  t.same(agentSecret(options, name, spec).data, {
    'openclaw.json': Buffer.from(spec.config).toString('base64'),
    'secret.telegram.token': Buffer.from('secret-token').toString('base64'),
  });
});

t.test('the NetworkPolicy: in from the platform only, out to its agent listener and DNS only', async (t) => {
  const policy = networkPolicy(options, name, spec).spec!;
  t.same(policy.policyTypes, ['Ingress', 'Egress']);
  t.same(policy.ingress, [
    { _from: [{ ipBlock: { cidr: '10.245.0.0/24' } }], ports: [{ protocol: 'TCP', port: 18789 }] },
  ]);
  t.same(policy.egress, [
    { to: [{ ipBlock: { cidr: '10.245.0.1/32' } }], ports: [{ protocol: 'TCP', port: 3002 }] },
    {
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    },
  ]);
});

t.test('a local volume is bound ahead to the agent claim, on the given nodes', async (t) => {
  const local = { ...options, storage: { localDir: '/var/lib/ay', nodes: ['n1', 'n2'] } };
  const volume = localVolume(local, name, spec, '/var/lib/ay/x', ['n1', 'n2']).spec!;
  t.same(volume.claimRef, { namespace: 'agents', name: claimOf(name) });
  t.equal(volume.persistentVolumeReclaimPolicy, 'Retain');
  t.same(volume.nodeAffinity!.required!.nodeSelectorTerms[0]!.matchExpressions![0]!.values, ['n1', 'n2']);
  t.equal(statefulSet(local, name, spec).spec!.volumeClaimTemplates![0]!.spec!.storageClassName, 'agentyard-local');
});

t.test('with an egress proxy: the pod goes out through it with its grant, and the policy lets it', async (t) => {
  const proxied = {
    ...options,
    egressProxy: { url: 'http://10.245.0.1:3128', direct: ['10.245.0.1'], grantKey: 'key' },
  };
  const env = statefulSet(proxied, name, { ...spec, egressHosts: ['api.telegram.org'] }).spec!.template.spec!
    .containers[0]!.env!;
  const value = (n: string) => env.find((e) => e.name === n)?.value;
  const proxy = new URL(value('HTTPS_PROXY')!);
  t.equal(proxy.host, '10.245.0.1:3128');
  t.equal(proxy.username, agentId, 'the grant names its agent');
  t.ok(
    verifyEgressGrant('key', agentId, decodeURIComponent(proxy.password))?.includes('api.telegram.org'),
    'and its channel host',
  );
  t.equal(value('NO_PROXY'), 'localhost,127.0.0.1,::1,10.245.0.1');
  t.equal(value('NODE_USE_ENV_PROXY'), '1');
  t.same(networkPolicy(proxied, name, spec).spec!.egress![1], {
    to: [{ ipBlock: { cidr: '10.245.0.1/32' } }],
    ports: [{ protocol: 'TCP', port: 3128 }],
  });
  t.notOk(
    statefulSet(options, name, spec).spec!.template.spec!.containers[0]!.env!.some((e) => e.name === 'HTTPS_PROXY'),
    'no proxy: no proxy environment',
  );
});
