import t from 'tap';
import { agentListenersOf, kubernetesDriverOptions, priorityClassOf, resourcesFor } from '../../src/index.ts';

const base = {
  RUNTIME_INSTANCE: 'ay',
  RUNTIME_ENGINE_TIMEOUT_MS: 15_000,
  RUNTIME_STOP_TIMEOUT_SECONDS: 10,
  AGENT_AI_GATEWAY_URL: 'http://10.245.0.1:3002',
};

t.test('KUBERNETES_* settings: the driver options, a provisioner or local volumes', async (t) => {
  const local = kubernetesDriverOptions(
    {
      ...base,
      KUBERNETES_PLATFORM_CIDRS: '10.245.0.0/24, 10.244.0.0/16',
      KUBERNETES_LOCAL_STORAGE_DIR: '/var/lib/ay',
      KUBERNETES_LOCAL_STORAGE_NODES: 'ay-node1,ay-node2',
      KUBERNETES_IMAGE_PULL_POLICY: 'Never',
    },
    'img',
  );
  t.match(local, {
    kubeconfig: '',
    namespace: /^agentyard-agents$/,
    instance: /^ay$/,
    defaultImage: /^img$/,
    platformCidrs: [/^10\.245\.0\.0\/24$/, /^10\.244\.0\.0\/16$/],
    agentListeners: [/^10\.245\.0\.1:3002$/],
    storage: { localDir: /^\/var\/lib\/ay$/, nodes: [/^ay-node1$/, /^ay-node2$/] },
    imagePullPolicy: /^Never$/,
    planPriorityClasses: false,
  });
  const provisioned = kubernetesDriverOptions(
    {
      ...base,
      KUBERNETES_PLATFORM_CIDRS: '10.0.0.0/8',
      KUBERNETES_STORAGE_CLASS: 'fast',
      KUBERNETES_NAMESPACE: 'agents',
      KUBERNETES_PLAN_PRIORITY_CLASSES: true,
    },
    'img',
  );
  t.same(provisioned.storage, { storageClassName: 'fast' }, "a provisioner's class");
  t.equal(provisioned.namespace, 'agents');
  t.equal(provisioned.planPriorityClasses, true);
  t.equal(provisioned.imagePullPolicy, 'IfNotPresent', 'pulled when missing by default');
});

t.test('KUBERNETES_* settings: what is missing or malformed is refused, naming the setting', async (t) => {
  const storage = { KUBERNETES_STORAGE_CLASS: 'fast' };
  t.throws(
    () => kubernetesDriverOptions({ ...base, ...storage }, 'img'),
    /KUBERNETES_PLATFORM_CIDRS is needed/,
    'no sources: a policy with none would let every source in',
  );
  t.throws(
    () => kubernetesDriverOptions({ ...base, ...storage, KUBERNETES_PLATFORM_CIDRS: '10.0.0.0/33' }, 'img'),
    /10.0.0.0\/33 is not an IPv4 CIDR/,
  );
  t.throws(
    () => kubernetesDriverOptions({ ...base, KUBERNETES_PLATFORM_CIDRS: '10.0.0.0/8' }, 'img'),
    /set one of KUBERNETES_STORAGE_CLASS/,
    'no storage',
  );
  t.throws(
    () =>
      kubernetesDriverOptions(
        {
          ...base,
          ...storage,
          KUBERNETES_PLATFORM_CIDRS: '10.0.0.0/8',
          KUBERNETES_LOCAL_STORAGE_DIR: '/x',
          KUBERNETES_LOCAL_STORAGE_NODES: 'n',
        },
        'img',
      ),
    /set one of/,
    'both storages',
  );
  t.throws(
    () =>
      kubernetesDriverOptions(
        { ...base, KUBERNETES_PLATFORM_CIDRS: '10.0.0.0/8', KUBERNETES_LOCAL_STORAGE_DIR: '/x' },
        'img',
      ),
    /needs KUBERNETES_LOCAL_STORAGE_NODES/,
  );
});

t.test('the NetworkPolicy egress: named listeners, else the AI gateway URL when it is an address', async (t) => {
  t.same(agentListenersOf('10.1.2.3:3002,10.1.2.4:3002', 'http://gateway.internal:3001'), [
    '10.1.2.3:3002',
    '10.1.2.4:3002',
  ]);
  t.same(agentListenersOf('', 'http://10.245.0.1:3002'), ['10.245.0.1:3002']);
  t.same(agentListenersOf('', 'https://10.245.0.1'), ['10.245.0.1:443'], 'the scheme’s port');
  t.throws(
    () => agentListenersOf('', 'http://host.containers.internal:3001'),
    /KUBERNETES_AGENT_LISTENERS is needed/,
    'a host name is no policy peer',
  );
  t.throws(() => agentListenersOf('10.1.2.3', undefined), /10.1.2.3 is not IPV4:PORT/);
  t.throws(() => agentListenersOf('10.1.2.300:80', undefined), /not IPV4:PORT/);
});

t.test("per-plan PriorityClasses: named by the plan's alias, as a DNS name", async (t) => {
  t.equal(resourcesFor('solo').plan, 'starter', 'a plan runs as its alias');
  t.equal(resourcesFor('label').plan, 'scale');
  t.equal(resourcesFor('network').plan, 'enterprise');
  t.equal(resourcesFor('white_glove').plan, 'white_glove', 'an alias is itself');
  t.equal(resourcesFor('unknown').plan, 'starter');
  t.equal(priorityClassOf('starter'), 'agentyard-plan-starter');
  t.equal(priorityClassOf('white_glove'), 'agentyard-plan-white-glove');
});

t.test('RUNTIME_EGRESS_PROXY: the pods get it with its grant key; it must be an IPv4 address', async (t) => {
  const settings = { ...base, KUBERNETES_PLATFORM_CIDRS: '10.0.0.0/8', KUBERNETES_STORAGE_CLASS: 'fast' };
  t.notOk(kubernetesDriverOptions(settings, 'img').egressProxy, 'none unless set');
  t.same(
    kubernetesDriverOptions(
      { ...settings, RUNTIME_EGRESS_PROXY: 'http://10.245.0.1:3128', EGRESS_GRANT_KEY: 'k' },
      'img',
    ).egressProxy,
    { url: 'http://10.245.0.1:3128', direct: ['10.245.0.1'], grantKey: 'k' },
    'the proxy and the AI gateway are reached directly',
  );
  t.throws(
    () => kubernetesDriverOptions({ ...settings, RUNTIME_EGRESS_PROXY: 'http://egress:3128' }, 'img'),
    /RUNTIME_EGRESS_PROXY must name the proxy by its IPv4 address/,
  );
});
