// The test cluster infra/kubernetes/up.sh runs (`npm run test:kubernetes`), as every file of the
// kubernetes tier reaches it: its clients, its Ready nodes, a kubernetes driver with the test
// settings, a command run in an agent's gateway container, and a watch until an object is as wanted.
import { execFile } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PassThrough } from 'node:stream';
import {
  AppsV1Api,
  CoreV1Api,
  Exec,
  KubeConfig,
  type KubernetesObject,
  NetworkingV1Api,
  type V1Pod,
  Watch,
} from '@kubernetes/client-node';
import { createKubernetesDriver, type KubernetesDriverOptions, type RuntimeDriver } from '../../src/index.ts';

/** The cluster's admin kubeconfig; '' where there is none (the files then skip). */
export const kubeconfig = process.env.AGENTYARD_KUBECONFIG ?? '';
export const noCluster = !kubeconfig && 'no cluster: run through `npm run test:kubernetes` (infra/kubernetes/up.sh)';
/** The minimal gateway image, imported into the nodes by up.sh. */
export const GATEWAY_TEST_IMAGE = 'localhost/agentyard-gateway-minimal:1';
const STATE_ROOT = process.env.AGENTYARD_K8S_STATE ?? '/var/lib/agentyard/kubernetes';

export interface ClusterClients {
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  net: NetworkingV1Api;
}

/** Clients of the cluster as the kubeconfig's user. */
export function clusterClients(path = kubeconfig): ClusterClients {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    net: kc.makeApiClient(NetworkingV1Api),
  };
}

/** The names of the cluster's Ready nodes, sorted. */
export async function readyNodes(core: CoreV1Api): Promise<string[]> {
  return (await core.listNode()).items
    .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((n) => n.metadata!.name!)
    .sort();
}

/** A folder of the host for the `local` volumes of `namespace`'s agents, made here; the caller removes it. */
export async function localStateDir(namespace: string): Promise<string> {
  const dir = join(STATE_ROOT, 'volumes', namespace);
  await mkdir(dir, { recursive: true, mode: 0o711 });
  return dir;
}

/** A kubernetes driver with the test cluster's settings (its bridge, its imported image); `options` override them. */
export function testKubernetesDriver(
  options: Pick<KubernetesDriverOptions, 'kubeconfig' | 'namespace' | 'instance' | 'storage'> &
    Partial<KubernetesDriverOptions>,
): RuntimeDriver {
  return createKubernetesDriver({
    defaultImage: GATEWAY_TEST_IMAGE,
    timeoutMs: 30_000,
    stopTimeoutSeconds: 5,
    platformCidrs: ['10.245.0.0/24'],
    agentListeners: ['10.245.0.1:3002'],
    imagePullPolicy: 'Never',
    ...options,
  });
}

/** Runs `command` in the agent's gateway container (pods/exec) and returns its output. */
export async function execIn(kc: KubeConfig, namespace: string, pod: string, command: string[]): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve, reject) => {
    new Exec(kc)
      .exec(namespace, pod, 'gateway', command, out, out, null, false, (status) =>
        status.status === 'Success' ? resolve() : reject(new Error(`exec: ${JSON.stringify(status)}`)),
      )
      .catch(reject);
  });
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Until the object `name` of the list at `path` satisfies `done` (a watch on it, watched again when
 * the client's 30 s inactivity timeout ends it).
 */
export async function watchUntil<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  name: string,
  done: (object: T) => boolean,
  timeoutMs = 240_000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let controller: AbortController | undefined;
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      controller?.abort();
      reject(new Error(`${path} ${name}: not as wanted within ${timeoutMs} ms`));
    }, timeoutMs);
    const follow = () =>
      new Watch(kc)
        .watch(
          path,
          { fieldSelector: `metadata.name=${name}` },
          (phase, object: T) => {
            if (!settled && phase !== 'DELETED' && done(object)) {
              settled = true;
              clearTimeout(timer);
              controller?.abort();
              resolve(object);
            }
          },
          // A watch without a version starts with the object as it is: nothing is missed in between.
          () => {
            if (!settled) void follow();
          },
        )
        .then(
          (c) => {
            controller = c;
            if (settled) c.abort();
          },
          (error: unknown) => {
            settled = true;
            clearTimeout(timer);
            reject(error);
          },
        );
    void follow();
  });
}

/** Until the pod `name` satisfies `done`. */
export const podWhere = (
  kc: KubeConfig,
  namespace: string,
  name: string,
  done: (pod: V1Pod) => boolean,
  timeoutMs?: number,
): Promise<V1Pod> => watchUntil<V1Pod>(kc, `/api/v1/namespaces/${namespace}/pods`, name, done, timeoutMs);

/**
 * Gives `image` another name, `as`, in every node's containerd (a tag: no copy, as if it had been
 * imported under that name too); the returned function removes the name.
 */
export async function tagOnNodes(image: string, as: string): Promise<() => Promise<void>> {
  const sockets = (await readdir(STATE_ROOT))
    .filter((entry) => /^node\d+$/.test(entry))
    .map((node) => join(STATE_ROOT, node, 'containerd.sock'));
  const ctr = (socket: string, ...args: string[]) =>
    promisify(execFile)('ctr', ['--address', socket, '-n', 'k8s.io', 'images', ...args]);
  for (const socket of sockets) await ctr(socket, 'tag', '--force', image, as);
  return async () => {
    for (const socket of sockets) await ctr(socket, 'rm', as).catch(() => undefined);
  };
}
