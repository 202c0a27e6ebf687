import type { V1NetworkPolicy, V1PersistentVolume, V1Secret, V1Service, V1StatefulSet } from '@kubernetes/client-node';
import { DEFAULT_STATE_DISK_BYTES, MB, NODE_UID } from '../docker-common.ts';
import { AGENT_PORT, type AgentContainerSpec, LABELS } from '../driver.ts';
import { egressProxyEnv } from '../egress.ts';
import { grantedProxyUrl } from '../egress-grant.ts';
import { addressOf } from '../kubernetes-settings.ts';
import { AGENT_SECRETS_DIR } from '../secret-files.ts';
import type { KubernetesDriverOptions } from './cluster.ts';

/** What the cluster is told about one agent's objects, and the names that tie them together. */

const HOME = '/home/node';
const STATE_DIR = `${HOME}/.openclaw`;
const CONFIG_MOUNT = '/run/agentyard';
export const CONFIG_FILE = 'openclaw.json';
export const CONTAINER = 'gateway';
const LOCAL_CLASS = 'agentyard-local';
/** Selects pods and objects of one agent; the instance label keeps platforms apart. */
const NAME_PREFIX = 'agent-';
export const nameOf = (agentId: string) => `${NAME_PREFIX}${agentId}`;
export const podOf = (name: string) => `${name}-0`;
export const claimOf = (name: string) => `state-${podOf(name)}`;
/** The local PersistentVolume holding an agent's state where the cluster has no provisioner. */
export const localVolumeOf = (instance: string, agentId: string) => `agentyard-${instance}-${agentId}`;
/** Once started, a scaled-down agent is `stopped`, not `created` (as an engine's container is). */
export const STARTED_ANNOTATION = 'agentyard.started';
/** On the pod, changed with its config: the kubelet syncs a changed pod's secret volume at once. */
export const CONFIG_ANNOTATION = 'agentyard.config-replaced';

/** The PriorityClass of a plan's agents: `agentyard-plan-<alias>` (a DNS name: `white_glove` is `white-glove`). */
export const priorityClassOf = (planAlias: string) => `agentyard-plan-${planAlias.replaceAll('_', '-')}`;

const labelsOf = (instance: string, agentId: string, userId: string) => ({
  'app.kubernetes.io/name': 'agentyard-agent',
  'app.kubernetes.io/managed-by': 'agentyard',
  [LABELS.managed]: 'true',
  [LABELS.instance]: instance,
  [LABELS.agentId]: agentId,
  [LABELS.userId]: userId,
});
const selectorOf = (instance: string, agentId: string) => ({ [LABELS.instance]: instance, [LABELS.agentId]: agentId });
export const instanceSelector = (instance: string) => `${LABELS.instance}=${instance}`;

/** The config file and each secret file (`secret.<name>`), as the Secret's data. */
function secretData(spec: AgentContainerSpec) {
  const data: Record<string, string> = { [CONFIG_FILE]: Buffer.from(spec.config).toString('base64') };
  for (const [file, content] of Object.entries(spec.secretFiles ?? {}))
    data[`secret.${file}`] = Buffer.from(content).toString('base64');
  return data;
}

export function agentSecret(options: KubernetesDriverOptions, name: string, spec: AgentContainerSpec): V1Secret {
  return {
    metadata: { name, namespace: options.namespace, labels: labelsOf(options.instance, spec.agentId, spec.userId) },
    type: 'Opaque',
    data: secretData(spec),
  };
}

/** Headless: the agent's DNS name, no cluster IP. */
export function agentService(options: KubernetesDriverOptions, name: string, spec: AgentContainerSpec): V1Service {
  return {
    metadata: { name, namespace: options.namespace, labels: labelsOf(options.instance, spec.agentId, spec.userId) },
    spec: {
      clusterIP: 'None',
      selector: selectorOf(options.instance, spec.agentId),
      ports: [{ name: 'gateway', port: AGENT_PORT, targetPort: AGENT_PORT }],
    },
  };
}

/** A `local` volume in `dir`, on the given nodes, bound ahead to the agent's claim. */
export function localVolume(
  options: KubernetesDriverOptions,
  name: string,
  spec: AgentContainerSpec,
  dir: string,
  nodes: string[],
): V1PersistentVolume {
  return {
    metadata: {
      name: localVolumeOf(options.instance, spec.agentId),
      labels: labelsOf(options.instance, spec.agentId, spec.userId),
    },
    spec: {
      capacity: { storage: String(spec.resources.diskBytes ?? DEFAULT_STATE_DISK_BYTES) },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: LOCAL_CLASS,
      // Bound ahead to the agent's claim: no other claim can take it.
      claimRef: { namespace: options.namespace, name: claimOf(name) },
      local: { path: dir },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] }],
        },
      },
    },
  };
}

export function statefulSet(options: KubernetesDriverOptions, name: string, spec: AgentContainerSpec): V1StatefulSet {
  const labels = labelsOf(options.instance, spec.agentId, spec.userId);
  const storageClassName = 'localDir' in options.storage ? LOCAL_CLASS : options.storage.storageClassName;
  return {
    metadata: { name, namespace: options.namespace, labels },
    spec: {
      replicas: 0,
      serviceName: name,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: selectorOf(options.instance, spec.agentId) },
      template: {
        metadata: { labels },
        spec: {
          ...(options.planPriorityClasses && spec.resources.plan
            ? { priorityClassName: priorityClassOf(spec.resources.plan) }
            : {}),
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: options.stopTimeoutSeconds,
          securityContext: {
            runAsUser: NODE_UID,
            runAsGroup: NODE_UID,
            runAsNonRoot: true,
            fsGroup: NODE_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [gatewayContainer(options, spec)],
          volumes: podVolumes(name, spec),
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'state', labels },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName,
            resources: { requests: { storage: String(spec.resources.diskBytes ?? DEFAULT_STATE_DISK_BYTES) } },
          },
        },
      ],
    },
  };
}

type PodSpec = NonNullable<NonNullable<V1StatefulSet['spec']>['template']['spec']>;

function gatewayContainer(options: KubernetesDriverOptions, spec: AgentContainerSpec): PodSpec['containers'][number] {
  const memory = String(spec.resources.memoryBytes);
  const cpu = `${Math.max(1, Math.round(spec.resources.cpus * 1000))}m`;
  const secretFiles = Object.keys(spec.secretFiles ?? {});
  return {
    name: CONTAINER,
    image: spec.image,
    imagePullPolicy: options.imagePullPolicy ?? 'IfNotPresent',
    env: [
      { name: 'HOME', value: HOME },
      { name: 'OPENCLAW_CONFIG_PATH', value: `${CONFIG_MOUNT}/${CONFIG_FILE}` },
      ...egressEnv(options, spec),
    ],
    ports: [{ name: 'gateway', containerPort: AGENT_PORT }],
    resources: { requests: { memory, cpu }, limits: { memory, cpu } },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    },
    readinessProbe: {
      httpGet: { path: '/readyz', port: AGENT_PORT },
      periodSeconds: 2,
      failureThreshold: 3,
    },
    volumeMounts: [
      { name: 'state', mountPath: STATE_DIR },
      { name: 'config', mountPath: CONFIG_MOUNT, readOnly: true },
      ...(secretFiles.length
        ? [{ name: 'secrets', mountPath: `${STATE_DIR}/${AGENT_SECRETS_DIR}`, readOnly: true }]
        : []),
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'cache', mountPath: `${HOME}/.cache` },
      { name: 'var-tmp', mountPath: '/var/tmp' },
      // Writable as the docker driver's tmpfs; the config's mount lies inside it.
      { name: 'run', mountPath: '/run' },
    ],
  };
}

/** The egress proxy's environment (as the docker driver's), its URL carrying the agent's grant of its channels' hosts. */
function egressEnv({ egressProxy: proxy }: KubernetesDriverOptions, spec: AgentContainerSpec) {
  if (!proxy) return [];
  const url = proxy.grantKey
    ? grantedProxyUrl(proxy.url, proxy.grantKey, spec.agentId, spec.egressHosts ?? [])
    : proxy.url;
  return egressProxyEnv(url, proxy.direct).map((entry) => {
    const at = entry.indexOf('=');
    return { name: entry.slice(0, at), value: entry.slice(at + 1) };
  });
}

function podVolumes(name: string, spec: AgentContainerSpec): NonNullable<PodSpec['volumes']> {
  const secretFiles = Object.keys(spec.secretFiles ?? {});
  const tmp = (volume: string, bytes: number) => ({
    name: volume,
    emptyDir: { medium: 'Memory', sizeLimit: String(bytes) },
  });
  return [
    {
      name: 'config',
      secret: { secretName: name, items: [{ key: CONFIG_FILE, path: CONFIG_FILE }], defaultMode: 0o440 },
    },
    // Only the secret files (an empty item list would project every key, the config too).
    ...(secretFiles.length
      ? [
          {
            name: 'secrets',
            secret: {
              secretName: name,
              items: secretFiles.map((file) => ({ key: `secret.${file}`, path: file })),
              defaultMode: 0o440,
            },
          },
        ]
      : []),
    tmp('tmp', 256 * MB),
    tmp('cache', 256 * MB),
    tmp('var-tmp', 64 * MB),
    tmp('run', 16 * MB),
  ];
}

export function networkPolicy(
  options: KubernetesDriverOptions,
  name: string,
  spec: AgentContainerSpec,
): V1NetworkPolicy {
  const proxy = options.egressProxy ? addressOf(options.egressProxy.url) : null;
  const listeners = [...options.agentListeners, ...(proxy ? [proxy] : [])].map((l) => ({
    ip: l.slice(0, l.lastIndexOf(':')),
    port: Number(l.slice(l.lastIndexOf(':') + 1)),
  }));
  return {
    metadata: { name, namespace: options.namespace, labels: labelsOf(options.instance, spec.agentId, spec.userId) },
    spec: {
      podSelector: { matchLabels: selectorOf(options.instance, spec.agentId) },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        {
          _from: options.platformCidrs.map((cidr) => ({ ipBlock: { cidr } })),
          ports: [{ protocol: 'TCP', port: AGENT_PORT }],
        },
      ],
      egress: [
        ...listeners.map((l) => ({
          to: [{ ipBlock: { cidr: `${l.ip}/32` } }],
          ports: [{ protocol: 'TCP', port: l.port }],
        })),
        {
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
      ],
    },
  };
}
