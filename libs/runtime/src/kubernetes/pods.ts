import { type V1Pod, type V1StatefulSet, Watch } from '@kubernetes/client-node';
import { type ContainerInfo, type ContainerState, type ContainerStats, LABELS, RuntimeError } from '../driver.ts';
import { type Cluster, ignore404, isIdleTimeout, updated } from './cluster.ts';
import { CONTAINER, podOf, STARTED_ANNOTATION } from './manifests.ts';

/** An agent's StatefulSet and its one pod: read, scaled, watched and described as the platform's container. */

export const readSet = (k: Cluster, name: string) =>
  k.apps.readNamespacedStatefulSet({ name, namespace: k.namespace }, k.timed).catch((error: unknown) => {
    ignore404(error);
    return null;
  });

export const readPod = (k: Cluster, name: string) =>
  k.core.readNamespacedPod({ name: podOf(name), namespace: k.namespace }, k.timed).catch((error: unknown) => {
    ignore404(error);
    return null;
  });

export const scale = (k: Cluster, name: string, replicas: number) =>
  updated(async () => {
    const current = await k.apps.readNamespacedStatefulSetScale({ name, namespace: k.namespace }, k.timed);
    if (current.spec?.replicas === replicas) return;
    await k.apps.replaceNamespacedStatefulSetScale(
      { name, namespace: k.namespace, body: { ...current, spec: { replicas } } },
      k.timed,
    );
  });

export const scheduledWithIp = (pod: V1Pod | null) => Boolean(pod?.status?.podIP && !pod.metadata?.deletionTimestamp);

const gatewayStatus = (pod: V1Pod | null) => pod?.status?.containerStatuses?.find((c) => c.name === CONTAINER);

/** Waiting reasons of a gateway that will not start: an image the node cannot get or run (kubelet's names). */
const IMAGE_FAILURES: ReadonlySet<string> = new Set([
  'ErrImageNeverPull',
  'InvalidImageName',
  'ImageInspectError',
  'ErrImagePull',
  'ImagePullBackOff',
]);

/** Why the pod's gateway cannot start (`<reason>: <message>`), or null: the kubelet cannot get or run its image. */
export function imageFailure(pod: V1Pod | null): string | null {
  const waiting = gatewayStatus(pod)?.state?.waiting;
  return waiting?.reason && IMAGE_FAILURES.has(waiting.reason)
    ? `${waiting.reason}: ${waiting.message ?? ''}`.trim()
    : null;
}

/** Scheduled with an address and its gateway started at least once (running, exited or restarted), as `docker start` returns. */
export function gatewayStarted(pod: V1Pod | null): boolean {
  const status = gatewayStatus(pod);
  return (
    scheduledWithIp(pod) &&
    Boolean(status?.state?.running || status?.state?.terminated || status?.lastState?.terminated)
  );
}

/** Until `done` holds for the agent's pod (watched, not polled), or the deadline passes. */
export async function awaitPod(
  k: Cluster,
  name: string,
  done: (pod: V1Pod | null) => boolean,
  what: string,
  ms: number,
): Promise<V1Pod | null> {
  const first = await readPod(k, name);
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
      new Watch(k.kc)
        .watch(
          `/api/v1/namespaces/${k.namespace}/pods`,
          { fieldSelector: `metadata.name=${podOf(name)}`, resourceVersion },
          (phase, pod: V1Pod) => check(phase === 'DELETED' ? null : pod),
          (error) => {
            if (settled) return;
            if (error && !isIdleTimeout(error))
              return finish(new RuntimeError(`kubernetes: ${what}: watch failed`, { cause: error }));
            // Ended early (the server's timeout, or client-node's after 30 s without an event, e.g. a
            // slow termination): one more look, then watch again; the deadline decides.
            readPod(k, name).then(
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

export function infoOf(set: V1StatefulSet, pod: V1Pod | null): ContainerInfo {
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
}

/** The gateway container's use, from the kubelet's summary through the API server (the metrics API is an add-on a cluster may lack). */
export async function podStats(k: Cluster, name: string): Promise<ContainerStats | null> {
  const pod = await readPod(k, name);
  const node = pod?.spec?.nodeName;
  if (!pod || !node) return null;
  const raw: unknown = await k.core.connectGetNodeProxyWithPath({ name: node, path: 'stats/summary' }, k.timed);
  // Typed as text, but the client parses a JSON answer itself.
  const summary = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
    pods?: {
      podRef: { name: string; namespace: string };
      containers?: { name: string; cpu?: { usageNanoCores?: number }; memory?: { workingSetBytes?: number } }[];
      network?: { rxBytes?: number; txBytes?: number };
    }[];
  };
  const entry = summary.pods?.find((p) => p.podRef.name === podOf(name) && p.podRef.namespace === k.namespace);
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
}
