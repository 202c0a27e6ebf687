import { type V1Pod, Watch } from '@kubernetes/client-node';
import { type ContainerEvent, LABELS } from '../driver.ts';
import { type Cluster, call } from './cluster.ts';
import { CONTAINER, instanceSelector, nameOf } from './manifests.ts';

/**
 * Exits and OOM kills from a watch on the agents' pods: a container whose terminated state (or
 * restart count) changed since it was last seen; and readiness changes, as `health`.
 */

/** An exit seen in the pod's gateway status; `seen` holds each pod's restarts (and a running exit) as last seen. */
function exitOf(pod: V1Pod, seen: Map<string, number>): ContainerEvent | null {
  const status = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
  const key = pod.metadata?.uid ?? '';
  const agentId = pod.metadata?.labels?.[LABELS.agentId] ?? '';
  const restarts = status?.restartCount ?? 0;
  const terminated =
    status?.state?.terminated ?? (restarts > (seen.get(key) ?? restarts) ? status?.lastState?.terminated : undefined);
  const before = seen.get(key);
  seen.set(key, restarts + (status?.state?.terminated ? 1 : 0));
  if (!terminated || before === undefined || before === restarts + (status?.state?.terminated ? 1 : 0)) return null;
  const time = String(BigInt(new Date(terminated.finishedAt ?? Date.now()).getTime()) * 1_000_000n);
  return {
    containerId: nameOf(agentId),
    agentId,
    kind: terminated.reason === 'OOMKilled' ? 'oom' : 'die',
    time,
    exitCode: terminated.exitCode,
  };
}

/** A change of the pod's readiness, as health; `ready` holds each pod's readiness as last seen. */
function healthChangeOf(phase: string, pod: V1Pod, ready: Map<string, boolean>): ContainerEvent | null {
  const key = pod.metadata?.uid ?? '';
  const agentId = pod.metadata?.labels?.[LABELS.agentId] ?? '';
  // Readiness as health: a pod that became ready (again, or anew on another node) has an address the platform follows.
  const condition = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const isReady = phase !== 'DELETED' && condition?.status === 'True';
  const wasReady = ready.get(key);
  if (phase === 'DELETED') ready.delete(key);
  else ready.set(key, isReady);
  // A pod first seen is not reported (a follower that starts sees every pod once); a new pod is first seen before it is ready.
  if (wasReady === undefined || isReady === wasReady) return null;
  // The API's own times, the same in every follower (the event's job id).
  const when =
    phase === 'DELETED'
      ? (pod.metadata?.deletionTimestamp ?? condition?.lastTransitionTime)
      : condition?.lastTransitionTime;
  const at = when ? new Date(when).getTime() : Date.now();
  return {
    containerId: nameOf(agentId),
    agentId,
    kind: 'health',
    health: isReady ? 'healthy' : 'unhealthy',
    time: String(BigInt(at) * 1_000_000n),
    exitCode: null,
  };
}

export async function* followPodEvents(
  k: Cluster,
  instance: string,
  signal: AbortSignal,
  onOpen?: () => void,
): AsyncIterable<ContainerEvent> {
  const queue: ContainerEvent[] = [];
  const seen = new Map<string, number>();
  const ready = new Map<string, boolean>();
  let wake: (() => void) | undefined;
  let ended = false;
  const controller = await call('events', () =>
    new Watch(k.kc).watch(
      `/api/v1/namespaces/${k.namespace}/pods`,
      { labelSelector: instanceSelector(instance) },
      (phase, pod: V1Pod) => {
        const exit = exitOf(pod, seen);
        if (exit) queue.push(exit);
        const health = healthChangeOf(phase, pod, ready);
        if (health) queue.push(health);
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
}
