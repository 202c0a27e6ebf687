import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  Observable,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  VersionApi,
} from '@kubernetes/client-node';
import { RuntimeError } from '../driver.ts';
import type { EgressProxy } from '../egress.ts';

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
  /** Agents' HTTP(S) proxy (RUNTIME_EGRESS_PROXY, its address an IPv4 one): each pod reaches its channels' hosts through it, with its grant. */
  egressProxy?: EgressProxy;
}

/** The cluster's API clients and the agents' namespace; `timed` goes with every call. */
export interface Cluster {
  kc: KubeConfig;
  apps: AppsV1Api;
  core: CoreV1Api;
  net: NetworkingV1Api;
  versions: VersionApi;
  timed: { middleware: ObservableMiddleware[]; middlewareMergeStrategy: 'append' };
  namespace: string;
}

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

export function connectCluster(options: KubernetesDriverOptions): Cluster {
  const kc = new KubeConfig();
  if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  return {
    kc,
    apps: kc.makeApiClient(AppsV1Api),
    core: kc.makeApiClient(CoreV1Api),
    net: kc.makeApiClient(NetworkingV1Api),
    versions: kc.makeApiClient(VersionApi),
    timed: { middleware: [timeoutMiddleware(options.timeoutMs)], middlewareMergeStrategy: 'append' },
    namespace: options.namespace,
  };
}

export const codeOf = (error: unknown) => (error instanceof ApiException ? error.code : undefined);
export const ignore404 = (error: unknown) => {
  if (codeOf(error) !== 404) throw error;
};
export const ignore409 = (error: unknown) => {
  if (codeOf(error) !== 409) throw error;
};
/** client-node ends a watch that saw no event for its request timeout (30 s) with a TimeoutError. */
export const isIdleTimeout = (error: unknown) => error instanceof Error && error.name === 'TimeoutError';

/** One driver operation: any failure but a RuntimeError becomes one, naming the operation and the API's status. */
export async function call<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    throw new RuntimeError(`kubernetes: ${what} failed${codeOf(error) ? ` (${codeOf(error)})` : ''}`, {
      cause: error,
    });
  }
}

/** Read, change, replace: again when the object changed in between (409; its controller writes its status too). */
export async function updated(change: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await change();
    } catch (error) {
      if (codeOf(error) !== 409 || attempt >= 5) throw error;
    }
  }
}
