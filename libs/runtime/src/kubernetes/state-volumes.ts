import { chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_UID } from '../docker-common.ts';
import type { AgentContainerSpec } from '../driver.ts';
import { type Cluster, ignore404, ignore409, type KubernetesDriverOptions } from './cluster.ts';
import { claimOf, localVolume, localVolumeOf, nameOf } from './manifests.ts';

/**
 * An agent's state: the claim of its StatefulSet's volume claim template, and where the cluster has
 * no provisioner (`storage.localDir`), the directory and local PersistentVolume the driver makes for it.
 */

/** The host directory of an agent's local volume (null: a provisioner's volume, out of the platform's reach). */
export const localStateDir = (options: KubernetesDriverOptions, agentId: string) =>
  'localDir' in options.storage ? join(options.storage.localDir, agentId) : null;

/** The agent's directory and its volume, bound to the claim its StatefulSet will make (nothing to do with a provisioner). */
export async function ensureStateVolume(
  k: Cluster,
  options: KubernetesDriverOptions,
  name: string,
  spec: AgentContainerSpec,
): Promise<void> {
  const storage = options.storage;
  if (!('localDir' in storage)) return;
  const dir = localStateDir(options, spec.agentId)!;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chown(dir, NODE_UID, NODE_UID);
  await k.core
    .createPersistentVolume({ body: localVolume(options, name, spec, dir, storage.nodes) }, k.timed)
    .catch(ignore409);
}

/** Removes the agent's claim, and its local volume and directory. */
export async function removeStateVolume(k: Cluster, options: KubernetesDriverOptions, agentId: string): Promise<void> {
  const name = nameOf(agentId);
  await k.core
    .deleteNamespacedPersistentVolumeClaim({ name: claimOf(name), namespace: k.namespace }, k.timed)
    .catch(ignore404);
  const dir = localStateDir(options, agentId);
  if (dir === null) return;
  await k.core.deletePersistentVolume({ name: localVolumeOf(options.instance, agentId) }, k.timed).catch(ignore404);
  // A force-deleted pod's gateway may still write there until its kubelet has killed it (ENOTEMPTY): asked again.
  await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 500 });
}
