import { registerDependency } from '@agentyard/observability';
import { chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  Log,
  NetworkingV1Api,
  Observable,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  type V1NetworkPolicy,
  type V1Pod,
  type V1StatefulSet,
  VersionApi,
  Watch,
} from '@kubernetes/client-node';
import { DEFAULT_STATE_DISK_BYTES, MB, NODE_UID } from './docker-common.ts';
import {
  AGENT_PORT,
  type AgentContainerSpec,
  type ContainerEvent,
  type ContainerInfo,
  type ContainerState,
  LABELS,
  type LogLine,
  RuntimeError,
  type RuntimeDriver,
} from './driver.ts';
import { AGENT_SECRETS_DIR } from './secret-files.ts';

/**
 * Agents on a Kubernetes cluster, through its API only (apps/v1, core/v1, networking.k8s.io/v1:
 * stable from 1.20 to today). One agent is:
 * - a StatefulSet `agent-<agentId>` of one replica (0 while stopped) whose volume claim template
 *   holds the agent's OpenClaw state (~/.openclaw);
 * - a Secret with its config file and secret files, mounted read-only;
 * - a headless Service (the agent's DNS name where the cluster has DNS);
 * - a NetworkPolicy: ingress only from the platform, egress only to the platform's agent listener
 *   and DNS (enforced only where the cluster's network plugin enforces policies).
 * The container id the platform holds is the StatefulSet's name.
 */
export interface KubernetesDriverOptions {
  /** A kubeconfig file; '' loads the default (in-cluster service account, then ~/.kube/config). */
  kubeconfig: string;
  /** The namespace agents live in (the platform's own is another; see docs/deploying-kubernetes.md). */
  namespace: string;
  /** Every object of this platform instance carries it; list() sees only these. */
  instance: string;
  defaultImage: string;
  /** Per API call. */
  timeoutMs: number;
  /** Grace given to a stopping gateway (terminationGracePeriodSeconds). */
  stopTimeoutSeconds: number;
  /** Where the platform's callers are (CIDRs): the only sources the NetworkPolicy lets in. */
  platformCidrs: string[];
  /** The platform's agent listener(s), `IPV4:PORT`: with DNS, the only destinations the NetworkPolicy lets out. */
  agentListeners: string[];
  /**
   * The agent's state volume. `{ storageClassName }`: claims a cluster's provisioner fills.
   * `{ localDir, nodes }`: no provisioner (a test cluster whose nodes share one filesystem): the
   * driver makes the agent's directory under `localDir` and a `local` PersistentVolume bound to the
   * agent's claim, reachable from `nodes`.
   */
  storage: { storageClassName: string } | { localDir: string; nodes: string[] };
  /** `Never` where images are imported into the nodes (no registry); `IfNotPresent` otherwise. */
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Pods get `priorityClassName: agentyard-plan-<plan alias>` (the cluster's PriorityClasses and per-plan quotas scoped by them). */
  planPriorityClasses?: boolean;
}

/** The PriorityClass of a plan's agents: `agentyard-plan-<alias>` (a DNS name: `white_glove` is `white-glove`). */
export const priorityClassOf = (planAlias: string) => `agentyard-plan-${planAlias.replaceAll('_', '-')}`;

const HOME = '/home/node';
const STATE_DIR = `${HOME}/.openclaw`;
const CONFIG_MOUNT = '/run/agentyard';
const CONFIG_FILE = 'openclaw.json';
const CONTAINER = 'gateway';
const LOCAL_CLASS = 'agentyard-local';
/** Selects pods and objects of one agent; the instance label keeps platforms apart. */
const NAME_PREFIX = 'agent-';
const nameOf = (agentId: string) => `${NAME_PREFIX}${agentId}`;
const podOf = (name: string) => `${name}-0`;
const claimOf = (name: string) => `state-${podOf(name)}`;
/** Once started, a scaled-down agent is `stopped`, not `created` (as an engine's container is). */
const STARTED_ANNOTATION = 'agentyard.started';
/** On the pod, changed with its config: the kubelet syncs a changed pod's secret volume at once. */
const CONFIG_ANNOTATION = 'agentyard.config-replaced';

const codeOf = (error: unknown) => (error instanceof ApiException ? error.code : undefined);
const ignore404 = (error: unknown) => {
  if (codeOf(error) !== 404) throw error;
};
/** client-node ends a watch that saw no event for its request timeout (30 s) with a TimeoutError. */
const isIdleTimeout = (error: unknown) => error instanceof Error && error.name === 'TimeoutError';
const ignore409 = (error: unknown) => {
  if (codeOf(error) !== 409) throw error;
};

/** Every API call ends within the driver's timeout. */
function timeoutMiddleware(ms: number): ObservableMiddleware {
  return {
    pre: (context: RequestContext) => {
      context.setSignal(AbortSignal.timeout(ms));
      return new Observable(Promise.resolve(context));
    },
    post: (context: ResponseContext) => new Observable(Promise.resolve(context)),
  };
}

/** `2026-11-27T17:01:02.123456789Z text` (kubelet's timestamps=true) as a log line. */
function logLineOf(line: string): LogLine | null {
  if (!line) return null;
  const space = line.indexOf(' ');
  if (space < 0) return { time: line, stream: 'stdout', text: '' };
  // The API does not say which stream a line came from.
  return { time: line.slice(0, space), stream: 'stdout', text: line.slice(space + 1) };
}

function stateOf(set: V1StatefulSet, pod: V1Pod | null): ContainerState {
  if ((set.spec?.replicas ?? 0) === 0) {
    if (pod) return 'running';
    return set.metadata?.annotations?.[STARTED_ANNOTATION] ? 'stopped' : 'created';
  }
  const status = pod?.status?.containerStatuses?.find((c) => c.name === CONTAINER);
  if (status?.state?.running) return 'running';
  if (status && (status.restartCount ?? 0) > 0) return 'restarting';
  return 'created';
}

/** Agents as StatefulSets on a Kubernetes cluster. */
export function createKubernetesDriver(options: KubernetesDriverOptions): RuntimeDriver {
  const kc = new KubeConfig();
  if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const versions = kc.makeApiClient(VersionApi);
  const timed = { middleware: [timeoutMiddleware(options.timeoutMs)], middlewareMergeStrategy: 'append' as const };
  const namespace = options.namespace;
  /** The last pod IP seen per agent: where gatewayUrl points (no kube-proxy needed). */
  const podIps = new Map<string, string>();

  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      throw new RuntimeError(`kubernetes: ${what} failed${codeOf(error) ? ` (${codeOf(error)})` : ''}`, {
        cause: error,
      });
    }
  };
  // The cluster is where agents run: not ready while its API does not answer.
  const withdrawCheck = registerDependency('container-engine', async () => {
    await versions.getCode(timed);
  });

  const labelsOf = (agentId: string, userId: string) => ({
    'app.kubernetes.io/name': 'agentyard-agent',
    'app.kubernetes.io/managed-by': 'agentyard',
    [LABELS.managed]: 'true',
    [LABELS.instance]: options.instance,
    [LABELS.agentId]: agentId,
    [LABELS.userId]: userId,
  });
  const selectorOf = (agentId: string) => ({ [LABELS.instance]: options.instance, [LABELS.agentId]: agentId });
  const instanceSelector = `${LABELS.instance}=${options.instance}`;

  const readSet = (name: string) =>
    apps.readNamespacedStatefulSet({ name, namespace }, timed).catch((error: unknown) => {
      ignore404(error);
      return null;
    });
  const readPod = (name: string) =>
    core.readNamespacedPod({ name: podOf(name), namespace }, timed).catch((error: unknown) => {
      ignore404(error);
      return null;
    });
  /** Read, change, replace: again when the object changed in between (409; its controller writes its status too). */
  const updated = async (change: () => Promise<void>) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await change();
      } catch (error) {
        if (codeOf(error) !== 409 || attempt >= 5) throw error;
      }
    }
  };
  const scale = (name: string, replicas: number) =>
    updated(async () => {
      const current = await apps.readNamespacedStatefulSetScale({ name, namespace }, timed);
      if (current.spec?.replicas === replicas) return;
      await apps.replaceNamespacedStatefulSetScale(
        { name, namespace, body: { ...current, spec: { replicas } } },
        timed,
      );
    });
  const remember = (agentId: string, pod: V1Pod | null) => {
    const ip = pod?.status?.podIP;
    if (ip) podIps.set(agentId, ip);
  };

  /** Until `done` holds for the agent's pod (watched, not polled), or the deadline passes. */
  const awaitPod = async (name: string, done: (pod: V1Pod | null) => boolean, what: string, ms: number) => {
    const first = await readPod(name);
    if (done(first)) return first;
    return new Promise<V1Pod | null>((resolve, reject) => {
      let controller: AbortController | undefined;
      let settled = false;
      const finish = (error: Error | null, pod: V1Pod | null = null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        controller?.abort();
        if (error) reject(error);
        else resolve(pod);
      };
      const timer = setTimeout(
        () => finish(new RuntimeError(`kubernetes: ${what}: not within ${Math.round(ms / 1000)} s`)),
        ms,
      );
      const check = (pod: V1Pod | null) => {
        if (done(pod)) finish(null, pod);
      };
      const watchPod = (resourceVersion: string | undefined) =>
        new Watch(kc)
          .watch(
            `/api/v1/namespaces/${namespace}/pods`,
            { fieldSelector: `metadata.name=${podOf(name)}`, resourceVersion },
            (phase, pod: V1Pod) => check(phase === 'DELETED' ? null : pod),
            (error) => {
              if (settled) return;
              if (error && !isIdleTimeout(error))
                return finish(new RuntimeError(`kubernetes: ${what}: watch failed`, { cause: error }));
              // Ended early (the server's timeout, or client-node's after 30 s without an event, e.g. a
              // slow termination): one more look, then watch again; the deadline decides.
              readPod(name).then(
                (pod) => {
                  check(pod);
                  if (!settled) watchPod(pod?.metadata?.resourceVersion);
                },
                (e: unknown) => finish(e as Error),
              );
            },
          )
          .then(
            (c) => {
              controller = c;
              if (settled) c.abort();
            },
            (error: unknown) => finish(new RuntimeError(`kubernetes: ${what}: watch failed`, { cause: error })),
          );
      watchPod(first?.metadata?.resourceVersion);
      // A change between the read and the watch is seen by the watch (it starts at the read's version).
    });
  };
  const scheduledWithIp = (pod: V1Pod | null) => Boolean(pod?.status?.podIP && !pod.metadata?.deletionTimestamp);
  const waitMs = () => Math.max(options.timeoutMs * 4, 120_000);

  const secretData = (spec: AgentContainerSpec) => {
    const data: Record<string, string> = { [CONFIG_FILE]: Buffer.from(spec.config).toString('base64') };
    for (const [file, content] of Object.entries(spec.secretFiles ?? {}))
      data[`secret.${file}`] = Buffer.from(content).toString('base64');
    return data;
  };

  const ensureVolume = async (name: string, agentId: string, spec: AgentContainerSpec) => {
    const storage = options.storage;
    if (!('localDir' in storage)) return;
    const dir = join(storage.localDir, agentId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chown(dir, NODE_UID, NODE_UID);
    await core
      .createPersistentVolume(
        {
          body: {
            metadata: { name: `agentyard-${options.instance}-${agentId}`, labels: labelsOf(agentId, spec.userId) },
            spec: {
              capacity: { storage: String(spec.resources.diskBytes ?? DEFAULT_STATE_DISK_BYTES) },
              accessModes: ['ReadWriteOnce'],
              persistentVolumeReclaimPolicy: 'Retain',
              storageClassName: LOCAL_CLASS,
              // Bound ahead to the agent's claim: no other claim can take it.
              claimRef: { namespace, name: claimOf(name) },
              local: { path: dir },
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [
                    { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: storage.nodes }] },
                  ],
                },
              },
            },
          },
        },
        timed,
      )
      .catch(ignore409);
  };

  const statefulSet = (name: string, spec: AgentContainerSpec): V1StatefulSet => {
    const labels = labelsOf(spec.agentId, spec.userId);
    const memory = String(spec.resources.memoryBytes);
    const cpu = `${Math.max(1, Math.round(spec.resources.cpus * 1000))}m`;
    const storageClassName = 'localDir' in options.storage ? LOCAL_CLASS : options.storage.storageClassName;
    const secretFiles = Object.keys(spec.secretFiles ?? {});
    const tmp = (volume: string, bytes: number) => ({
      name: volume,
      emptyDir: { medium: 'Memory', sizeLimit: String(bytes) },
    });
    return {
      metadata: { name, namespace, labels },
      spec: {
        replicas: 0,
        serviceName: name,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selectorOf(spec.agentId) },
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
            containers: [
              {
                name: CONTAINER,
                image: spec.image,
                imagePullPolicy: options.imagePullPolicy ?? 'IfNotPresent',
                env: [
                  { name: 'HOME', value: HOME },
                  { name: 'OPENCLAW_CONFIG_PATH', value: `${CONFIG_MOUNT}/${CONFIG_FILE}` },
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
              },
            ],
            volumes: [
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
            ],
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
  };

  const networkPolicy = (name: string, spec: AgentContainerSpec): V1NetworkPolicy => {
    const listeners = options.agentListeners.map((l) => ({
      ip: l.slice(0, l.lastIndexOf(':')),
      port: Number(l.slice(l.lastIndexOf(':') + 1)),
    }));
    return {
      metadata: { name, namespace, labels: labelsOf(spec.agentId, spec.userId) },
      spec: {
        podSelector: { matchLabels: selectorOf(spec.agentId) },
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
  };

  const info = (set: V1StatefulSet, pod: V1Pod | null): ContainerInfo => {
    const status = pod?.status?.containerStatuses?.find((c) => c.name === CONTAINER);
    const ended = status?.lastState?.terminated ?? status?.state?.terminated;
    const running = status?.state?.running;
    return {
      id: set.metadata?.name ?? '',
      agentId: set.metadata?.labels?.[LABELS.agentId] ?? '',
      userId: set.metadata?.labels?.[LABELS.userId] ?? '',
      image: set.spec?.template.spec?.containers[0]?.image ?? '',
      state: stateOf(set, pod),
      hostPort: null,
      startedAt: running?.startedAt ? new Date(running.startedAt).toISOString() : null,
      lastExit:
        ended?.finishedAt && ended.startedAt
          ? {
              startedAt: new Date(ended.startedAt).toISOString(),
              finishedAt: new Date(ended.finishedAt).toISOString(),
              exitCode: ended.exitCode,
              oomKilled: ended.reason === 'OOMKilled',
            }
          : null,
    };
  };

  const startAndAwait = async (name: string) => {
    let agentId = '';
    await updated(async () => {
      const set = await apps.readNamespacedStatefulSet({ name, namespace }, timed);
      agentId = set.metadata?.labels?.[LABELS.agentId] ?? '';
      if (set.metadata?.annotations?.[STARTED_ANNOTATION]) return;
      set.metadata = { ...set.metadata, annotations: { ...set.metadata?.annotations, [STARTED_ANNOTATION]: 'true' } };
      await apps.replaceNamespacedStatefulSet({ name, namespace, body: set }, timed);
    });
    await scale(name, 1);
    const pod = await awaitPod(name, scheduledWithIp, `agent ${name} scheduled`, waitMs());
    remember(agentId, pod);
  };

  return {
    kind: 'kubernetes',
    defaultImage: options.defaultImage,
    updatesInPlace: true,

    async version() {
      const v = await call('version', () => versions.getCode(timed));
      return { engine: 'kubernetes', version: v.gitVersion };
    },

    async create(spec) {
      const name = nameOf(spec.agentId);
      return call('create', async () => {
        await core
          .createNamespacedSecret(
            {
              namespace,
              body: {
                metadata: { name, namespace, labels: labelsOf(spec.agentId, spec.userId) },
                type: 'Opaque',
                data: secretData(spec),
              },
            },
            timed,
          )
          .catch(async (error: unknown) => {
            ignore409(error);
            // A new container gets the config it is created with (the docker driver writes a new directory).
            await core.replaceNamespacedSecret(
              {
                name,
                namespace,
                body: {
                  metadata: { name, namespace, labels: labelsOf(spec.agentId, spec.userId) },
                  type: 'Opaque',
                  data: secretData(spec),
                },
              },
              timed,
            );
          });
        await ensureVolume(name, spec.agentId, spec);
        await core
          .createNamespacedService(
            {
              namespace,
              body: {
                metadata: { name, namespace, labels: labelsOf(spec.agentId, spec.userId) },
                spec: {
                  clusterIP: 'None',
                  selector: selectorOf(spec.agentId),
                  ports: [{ name: 'gateway', port: AGENT_PORT, targetPort: AGENT_PORT }],
                },
              },
            },
            timed,
          )
          .catch(ignore409);
        await net.createNamespacedNetworkPolicy({ namespace, body: networkPolicy(name, spec) }, timed).catch(ignore409);
        await apps
          .createNamespacedStatefulSet({ namespace, body: statefulSet(name, spec) }, timed)
          .catch(async (error: unknown) => {
            ignore409(error);
            // Created again (an image update): the new template, scaled down until started.
            await updated(async () => {
              const current = await apps.readNamespacedStatefulSet({ name, namespace }, timed);
              const next = statefulSet(name, spec);
              await apps.replaceNamespacedStatefulSet(
                {
                  name,
                  namespace,
                  body: { ...current, spec: { ...current.spec!, template: next.spec!.template, replicas: 0 } },
                },
                timed,
              );
            });
          });
        return name;
      });
    },

    start: (id) => call('start', () => startAndAwait(id)),

    async replaceConfig(id, config) {
      await call('replace config', async () => {
        await updated(async () => {
          const secret = await core.readNamespacedSecret({ name: id, namespace }, timed);
          secret.data = { ...secret.data, [CONFIG_FILE]: Buffer.from(config).toString('base64') };
          await core.replaceNamespacedSecret({ name: id, namespace, body: secret }, timed);
        });
        // The kubelet writes a secret volume's new files (atomically) when it next syncs the pod: a
        // change to the pod makes that now rather than within its sync period (about a minute).
        await updated(async () => {
          const pod = await readPod(id);
          if (!pod) return;
          pod.metadata = {
            ...pod.metadata,
            annotations: { ...pod.metadata?.annotations, [CONFIG_ANNOTATION]: String(Date.now()) },
          };
          await core.replaceNamespacedPod({ name: podOf(id), namespace, body: pod }, timed);
        }).catch(ignore404);
      });
    },

    async readConfig(id) {
      return call('read config', async () => {
        const secret = await core.readNamespacedSecret({ name: id, namespace }, timed).catch((error: unknown) => {
          ignore404(error);
          return null;
        });
        const data = secret?.data?.[CONFIG_FILE];
        return data ? Buffer.from(data, 'base64').toString('utf8') : null;
      });
    },

    stateDirectory(agentId) {
      // Local volumes are directories of this host; a provisioner's volumes are out of the platform's reach.
      return 'localDir' in options.storage
        ? { path: join(options.storage.localDir, agentId), ownerUid: NODE_UID }
        : null;
    },

    async stop(id) {
      await call('stop', async () => {
        if (!(await readSet(id))) return;
        await scale(id, 0);
        await awaitPod(id, (pod) => pod === null, `agent ${id} stopped`, (options.stopTimeoutSeconds + 30) * 1000);
      });
    },

    async restart(id) {
      await call('restart', async () => {
        const before = await readPod(id);
        if (before) {
          await core
            .deleteNamespacedPod({ name: podOf(id), namespace, gracePeriodSeconds: options.stopTimeoutSeconds }, timed)
            .catch(ignore404);
          // The StatefulSet makes a new pod of the same name: wait for one that is not the old one.
          await awaitPod(
            id,
            (pod) => pod?.metadata?.uid !== before.metadata?.uid && scheduledWithIp(pod),
            `agent ${id} restarted`,
            waitMs(),
          );
        }
        await startAndAwait(id);
      });
    },

    async inspect(id) {
      return call('inspect', async () => {
        const set = await readSet(id);
        if (!set) return null;
        const pod = await readPod(id);
        remember(set.metadata?.labels?.[LABELS.agentId] ?? '', pod);
        return info(set, pod);
      });
    },

    async stats(id) {
      return call('stats', async () => {
        const pod = await readPod(id);
        const node = pod?.spec?.nodeName;
        if (!pod || !node) return null;
        // The kubelet's summary through the API server (the metrics API is an add-on a cluster may lack).
        const raw: unknown = await core.connectGetNodeProxyWithPath({ name: node, path: 'stats/summary' }, timed);
        // Typed as text, but the client parses a JSON answer itself.
        const summary = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
          pods?: {
            podRef: { name: string; namespace: string };
            containers?: { name: string; cpu?: { usageNanoCores?: number }; memory?: { workingSetBytes?: number } }[];
            network?: { rxBytes?: number; txBytes?: number };
          }[];
        };
        const entry = summary.pods?.find((p) => p.podRef.name === podOf(id) && p.podRef.namespace === namespace);
        const container = entry?.containers?.find((c) => c.name === CONTAINER);
        if (!container) return null;
        const limit = pod.spec?.containers.find((c) => c.name === CONTAINER)?.resources?.limits?.memory;
        return {
          cpuPercent: Math.round((container.cpu?.usageNanoCores ?? 0) / 1e5) / 100,
          memoryBytes: container.memory?.workingSetBytes ?? 0,
          memoryLimitBytes: limit ? Number(limit) : 0,
          ...(entry?.network
            ? { networkRxBytes: entry.network.rxBytes ?? 0, networkTxBytes: entry.network.txBytes ?? 0 }
            : {}),
        };
      });
    },

    async remove(id) {
      await call('remove', async () => {
        const set = await readSet(id);
        await apps
          .deleteNamespacedStatefulSet({ name: id, namespace, propagationPolicy: 'Background' }, timed)
          .catch(ignore404);
        await core.deleteNamespacedPod({ name: podOf(id), namespace, gracePeriodSeconds: 0 }, timed).catch(ignore404);
        await core.deleteNamespacedService({ name: id, namespace }, timed).catch(ignore404);
        await net.deleteNamespacedNetworkPolicy({ name: id, namespace }, timed).catch(ignore404);
        await core.deleteNamespacedSecret({ name: id, namespace }, timed).catch(ignore404);
        // The claim (the agent's state) stays until removeState, as the docker driver keeps its state.
        await awaitPod(id, (pod) => pod === null, `agent ${id} removed`, (options.stopTimeoutSeconds + 30) * 1000);
        if (set) podIps.delete(set.metadata?.labels?.[LABELS.agentId] ?? '');
      });
    },

    async list(filter = {}) {
      return call('list', async () => {
        const selector = filter.agentId ? `${instanceSelector},${LABELS.agentId}=${filter.agentId}` : instanceSelector;
        const sets = await apps.listNamespacedStatefulSet({ namespace, labelSelector: selector }, timed);
        const pods = await core.listNamespacedPod({ namespace, labelSelector: selector }, timed);
        return sets.items.map((set) =>
          info(set, pods.items.find((p) => p.metadata?.name === podOf(set.metadata?.name ?? '')) ?? null),
        );
      });
    },

    async removeState(agentId) {
      await call('remove state', async () => {
        const name = nameOf(agentId);
        await core.deleteNamespacedPersistentVolumeClaim({ name: claimOf(name), namespace }, timed).catch(ignore404);
        if ('localDir' in options.storage) {
          await core
            .deletePersistentVolume({ name: `agentyard-${options.instance}-${agentId}` }, timed)
            .catch(ignore404);
          // A force-deleted pod's gateway may still write there until its kubelet has killed it (ENOTEMPTY): asked again.
          await rm(join(options.storage.localDir, agentId), {
            recursive: true,
            force: true,
            maxRetries: 10,
            retryDelay: 500,
          });
        }
      });
    },

    async logs(id, tail) {
      return call('logs', async () => {
        const text = await core
          .readNamespacedPodLog(
            { name: podOf(id), namespace, container: CONTAINER, tailLines: tail, timestamps: true },
            timed,
          )
          .catch((error: unknown) => {
            // No pod (stopped) or no container yet: nothing written.
            if (codeOf(error) === 404 || codeOf(error) === 400) return '';
            throw error;
          });
        return text.split('\n').flatMap((line) => logLineOf(line) ?? []);
      });
    },

    async *followLogs(id, signal) {
      const lines: LogLine[] = [];
      let wake: (() => void) | undefined;
      let ended = false;
      let failure: unknown;
      let partial = '';
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          const text = partial + chunk.toString('utf8');
          const parts = text.split('\n');
          partial = parts.pop() ?? '';
          for (const part of parts) {
            const line = logLineOf(part);
            if (line) lines.push(line);
          }
          wake?.();
          done();
        },
        final(done) {
          ended = true;
          wake?.();
          done();
        },
      });
      const controller = await call('follow logs', () =>
        new Log(kc).log(namespace, podOf(id), CONTAINER, sink, { follow: true, timestamps: true, tailLines: 0 }),
      );
      const abort = () => controller.abort();
      signal.addEventListener('abort', abort, { once: true });
      sink.on('error', (error) => {
        failure = error;
        ended = true;
        wake?.();
      });
      try {
        while (!signal.aborted) {
          while (lines.length > 0) yield lines.shift()!;
          if (ended) break;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
        }
        if (failure && !signal.aborted) throw new RuntimeError('kubernetes: following logs failed', { cause: failure });
      } finally {
        signal.removeEventListener('abort', abort);
        controller.abort();
      }
    },

    async *events(signal, onOpen) {
      // Exits and OOM kills from a watch on the agents' pods: a container whose terminated state (or
      // restart count) changed since it was last seen; and readiness changes, as `health`.
      const queue: ContainerEvent[] = [];
      const seen = new Map<string, number>();
      const ready = new Map<string, boolean>();
      let wake: (() => void) | undefined;
      let ended = false;
      const controller = await call('events', () =>
        new Watch(kc).watch(
          `/api/v1/namespaces/${namespace}/pods`,
          { labelSelector: instanceSelector },
          (phase, pod: V1Pod) => {
            const status = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
            const key = pod.metadata?.uid ?? '';
            const agentId = pod.metadata?.labels?.[LABELS.agentId] ?? '';
            const restarts = status?.restartCount ?? 0;
            const terminated =
              status?.state?.terminated ??
              (restarts > (seen.get(key) ?? restarts) ? status?.lastState?.terminated : undefined);
            const before = seen.get(key);
            seen.set(key, restarts + (status?.state?.terminated ? 1 : 0));
            if (terminated && before !== undefined && before !== restarts + (status?.state?.terminated ? 1 : 0)) {
              const time = String(BigInt(new Date(terminated.finishedAt ?? Date.now()).getTime()) * 1_000_000n);
              queue.push({
                containerId: nameOf(agentId),
                agentId,
                kind: terminated.reason === 'OOMKilled' ? 'oom' : 'die',
                time,
                exitCode: terminated.exitCode,
              });
            }
            // Readiness as health: a pod that became ready (again, or anew on another node) has an address the platform follows.
            const condition = pod.status?.conditions?.find((c) => c.type === 'Ready');
            const isReady = phase !== 'DELETED' && condition?.status === 'True';
            const wasReady = ready.get(key);
            if (phase === 'DELETED') ready.delete(key);
            else ready.set(key, isReady);
            // A pod first seen is not reported (a follower that starts sees every pod once); a new pod is first seen before it is ready.
            if (wasReady !== undefined && isReady !== wasReady) {
              // The API's own times, the same in every follower (the event's job id).
              const when =
                phase === 'DELETED'
                  ? (pod.metadata?.deletionTimestamp ?? condition?.lastTransitionTime)
                  : condition?.lastTransitionTime;
              const at = when ? new Date(when).getTime() : Date.now();
              queue.push({
                containerId: nameOf(agentId),
                agentId,
                kind: 'health',
                health: isReady ? 'healthy' : 'unhealthy',
                time: String(BigInt(at) * 1_000_000n),
                exitCode: null,
              });
            }
            wake?.();
          },
          () => {
            ended = true;
            wake?.();
          },
        ),
      );
      onOpen?.();
      const abort = () => controller.abort();
      signal.addEventListener('abort', abort, { once: true });
      try {
        while (!signal.aborted) {
          while (queue.length > 0) yield queue.shift()!;
          if (ended) break;
          await new Promise<void>((resolve) => {
            wake = resolve;
            if (signal.aborted) resolve();
          });
          wake = undefined;
        }
      } finally {
        signal.removeEventListener('abort', abort);
        controller.abort();
      }
    },

    gatewayUrl(_hostPort, agentId) {
      // Pod IPs (seen by start/inspect): no Service cluster IP needed, so no kube-proxy. Before one is
      // seen, the headless Service's DNS name (a cluster with DNS and the platform inside it).
      const ip = podIps.get(agentId);
      return ip ? `http://${ip}:${AGENT_PORT}` : `http://${nameOf(agentId)}.${namespace}.svc:${AGENT_PORT}`;
    },

    async close() {
      withdrawCheck();
    },
  };
}
