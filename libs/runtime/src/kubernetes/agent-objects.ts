import type { V1Pod } from '@kubernetes/client-node';
import { type AgentContainerSpec, type ContainerInfo, LABELS, RuntimeError } from '../driver.ts';
import { type Cluster, ignore404, ignore409, type KubernetesDriverOptions, updated } from './cluster.ts';
import {
  agentSecret,
  agentService,
  CONFIG_ANNOTATION,
  CONFIG_FILE,
  instanceSelector,
  nameOf,
  networkPolicy,
  podOf,
  STARTED_ANNOTATION,
  statefulSet,
} from './manifests.ts';
import { awaitPod, gatewayStarted, imageFailure, infoOf, readPod, readSet, scale, scheduledWithIp } from './pods.ts';
import { ensureStateVolume } from './state-volumes.ts';

/** An agent's objects through their lifecycle: created (or replaced), scaled up and down, removed; its config. */

/** The last pod IP seen per agent: where gatewayUrl points (no kube-proxy needed). */
export type PodAddresses = Map<string, string>;

const remember = (podIps: PodAddresses, agentId: string, pod: V1Pod | null) => {
  const ip = pod?.status?.podIP;
  if (ip) podIps.set(agentId, ip);
};

/** How long a pod may take to be scheduled with an address. */
const scheduleMs = (options: KubernetesDriverOptions) => Math.max(options.timeoutMs * 4, 120_000);
/** How long a pod may take to go: the gateway's grace, and some. */
const goneMs = (options: KubernetesDriverOptions) => (options.stopTimeoutSeconds + 30) * 1000;

/** Creates the agent's Secret, state volume, Service, NetworkPolicy and StatefulSet, replacing the Secret and template where they exist. */
export async function createAgent(
  k: Cluster,
  options: KubernetesDriverOptions,
  spec: AgentContainerSpec,
): Promise<string> {
  const { namespace, timed } = k;
  const name = nameOf(spec.agentId);
  await k.core
    .createNamespacedSecret({ namespace, body: agentSecret(options, name, spec) }, timed)
    .catch(async (error: unknown) => {
      ignore409(error);
      // A new container gets the config it is created with (the docker driver writes a new directory).
      await k.core.replaceNamespacedSecret({ name, namespace, body: agentSecret(options, name, spec) }, timed);
    });
  await ensureStateVolume(k, options, name, spec);
  await k.core.createNamespacedService({ namespace, body: agentService(options, name, spec) }, timed).catch(ignore409);
  await k.net
    .createNamespacedNetworkPolicy({ namespace, body: networkPolicy(options, name, spec) }, timed)
    .catch(ignore409);
  await k.apps
    .createNamespacedStatefulSet({ namespace, body: statefulSet(options, name, spec) }, timed)
    .catch(async (error: unknown) => {
      ignore409(error);
      // Created again (an image update): the new template, scaled down until started.
      await updated(async () => {
        const current = await k.apps.readNamespacedStatefulSet({ name, namespace }, timed);
        const next = statefulSet(options, name, spec);
        await k.apps.replaceNamespacedStatefulSet(
          {
            name,
            namespace,
            body: { ...current, spec: { ...current.spec!, template: next.spec!.template, replicas: 0 } },
          },
          timed,
        );
      });
      // The old pod gone first: a start must not find it still there and take it for the new one.
      await podGone(k, options, name, 'replaced');
    });
  return name;
}

/** Marks the agent started, scales it to one and waits for its pod's address. */
export async function startAgent(
  k: Cluster,
  options: KubernetesDriverOptions,
  podIps: PodAddresses,
  name: string,
): Promise<void> {
  let agentId = '';
  await updated(async () => {
    const set = await k.apps.readNamespacedStatefulSet({ name, namespace: k.namespace }, k.timed);
    agentId = set.metadata?.labels?.[LABELS.agentId] ?? '';
    if (set.metadata?.annotations?.[STARTED_ANNOTATION]) return;
    set.metadata = { ...set.metadata, annotations: { ...set.metadata?.annotations, [STARTED_ANNOTATION]: 'true' } };
    await k.apps.replaceNamespacedStatefulSet({ name, namespace: k.namespace, body: set }, k.timed);
  });
  await scale(k, name, 1);
  const pod = await awaitPod(
    k,
    name,
    (p) => gatewayStarted(p) || imageFailure(p) !== null,
    `agent ${name} started`,
    scheduleMs(options),
  );
  remember(podIps, agentId, pod);
  // An image the node cannot get never starts: said now, as the docker driver's create fails on it.
  const failure = imageFailure(pod);
  if (failure) throw new RuntimeError(`kubernetes: agent ${name} cannot start: ${failure}`);
}

/**
 * Until the agent's pod (scaled down) is gone. One whose image the node cannot get is deleted at once:
 * it has no process to stop, and the kubelet, backing off the image, left it terminating for about a
 * minute here.
 */
async function podGone(k: Cluster, options: KubernetesDriverOptions, name: string, what: string): Promise<void> {
  const pod = await readPod(k, name);
  if (imageFailure(pod))
    await k.core
      .deleteNamespacedPod({ name: podOf(name), namespace: k.namespace, gracePeriodSeconds: 0 }, k.timed)
      .catch(ignore404);
  await awaitPod(k, name, (p) => p === null, `agent ${name} ${what}`, goneMs(options));
}

export async function stopAgent(k: Cluster, options: KubernetesDriverOptions, name: string): Promise<void> {
  if (!(await readSet(k, name))) return;
  await scale(k, name, 0);
  await podGone(k, options, name, 'stopped');
}

export async function restartAgent(
  k: Cluster,
  options: KubernetesDriverOptions,
  podIps: PodAddresses,
  name: string,
): Promise<void> {
  const before = await readPod(k, name);
  if (before) {
    await k.core
      .deleteNamespacedPod(
        { name: podOf(name), namespace: k.namespace, gracePeriodSeconds: options.stopTimeoutSeconds },
        k.timed,
      )
      .catch(ignore404);
    // The StatefulSet makes a new pod of the same name: wait for one that is not the old one.
    await awaitPod(
      k,
      name,
      (pod) => pod?.metadata?.uid !== before.metadata?.uid && scheduledWithIp(pod),
      `agent ${name} restarted`,
      scheduleMs(options),
    );
  }
  await startAgent(k, options, podIps, name);
}

/** The agent's container as the platform sees it, remembering its pod's address. */
export async function inspectAgent(k: Cluster, podIps: PodAddresses, name: string): Promise<ContainerInfo | null> {
  const set = await readSet(k, name);
  if (!set) return null;
  const pod = await readPod(k, name);
  remember(podIps, set.metadata?.labels?.[LABELS.agentId] ?? '', pod);
  return infoOf(set, pod);
}

/** This instance's agents (or one agent's), each with its pod. */
export async function listAgents(k: Cluster, instance: string, filter: { agentId?: string }): Promise<ContainerInfo[]> {
  const selector = filter.agentId
    ? `${instanceSelector(instance)},${LABELS.agentId}=${filter.agentId}`
    : instanceSelector(instance);
  const sets = await k.apps.listNamespacedStatefulSet({ namespace: k.namespace, labelSelector: selector }, k.timed);
  const pods = await k.core.listNamespacedPod({ namespace: k.namespace, labelSelector: selector }, k.timed);
  return sets.items.map((set) =>
    infoOf(set, pods.items.find((p) => p.metadata?.name === podOf(set.metadata?.name ?? '')) ?? null),
  );
}

/** Everything of the agent but its state claim, which stays until removeState (as the docker driver keeps its state). */
export async function removeAgent(
  k: Cluster,
  options: KubernetesDriverOptions,
  podIps: PodAddresses,
  name: string,
): Promise<void> {
  const { namespace, timed } = k;
  const set = await readSet(k, name);
  await k.apps
    .deleteNamespacedStatefulSet({ name, namespace, propagationPolicy: 'Background' }, timed)
    .catch(ignore404);
  await k.core.deleteNamespacedPod({ name: podOf(name), namespace, gracePeriodSeconds: 0 }, timed).catch(ignore404);
  await k.core.deleteNamespacedService({ name, namespace }, timed).catch(ignore404);
  await k.net.deleteNamespacedNetworkPolicy({ name, namespace }, timed).catch(ignore404);
  await k.core.deleteNamespacedSecret({ name, namespace }, timed).catch(ignore404);
  await awaitPod(k, name, (pod) => pod === null, `agent ${name} removed`, goneMs(options));
  if (set) podIps.delete(set.metadata?.labels?.[LABELS.agentId] ?? '');
}

export async function replaceAgentConfig(k: Cluster, name: string, config: string): Promise<void> {
  const { namespace, timed } = k;
  await updated(async () => {
    const secret = await k.core.readNamespacedSecret({ name, namespace }, timed);
    secret.data = { ...secret.data, [CONFIG_FILE]: Buffer.from(config).toString('base64') };
    await k.core.replaceNamespacedSecret({ name, namespace, body: secret }, timed);
  });
  // The kubelet writes a secret volume's new files (atomically) when it next syncs the pod: a
  // change to the pod makes that now rather than within its sync period (about a minute).
  await updated(async () => {
    const pod = await readPod(k, name);
    if (!pod) return;
    pod.metadata = {
      ...pod.metadata,
      annotations: { ...pod.metadata?.annotations, [CONFIG_ANNOTATION]: String(Date.now()) },
    };
    await k.core.replaceNamespacedPod({ name: podOf(name), namespace, body: pod }, timed);
  }).catch(ignore404);
}

export async function readAgentConfig(k: Cluster, name: string): Promise<string | null> {
  const secret = await k.core
    .readNamespacedSecret({ name, namespace: k.namespace }, k.timed)
    .catch((error: unknown) => {
      ignore404(error);
      return null;
    });
  const data = secret?.data?.[CONFIG_FILE];
  return data ? Buffer.from(data, 'base64').toString('utf8') : null;
}
