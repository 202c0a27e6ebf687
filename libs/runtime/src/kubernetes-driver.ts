import { registerDependency } from '@agentyard/observability';
import { NODE_UID } from './docker-common.ts';
import { AGENT_PORT, type RuntimeDriver } from './driver.ts';
import {
  createAgent,
  inspectAgent,
  listAgents,
  type PodAddresses,
  readAgentConfig,
  removeAgent,
  replaceAgentConfig,
  restartAgent,
  startAgent,
  stopAgent,
} from './kubernetes/agent-objects.ts';
import { call, connectCluster, type KubernetesDriverOptions } from './kubernetes/cluster.ts';
import { followPodEvents } from './kubernetes/events.ts';
import { followPodLogs, readPodLogs } from './kubernetes/logs.ts';
import { nameOf } from './kubernetes/manifests.ts';
import { podStats } from './kubernetes/pods.ts';
import { localStateDir, removeStateVolume } from './kubernetes/state-volumes.ts';

export type { KubernetesDriverOptions } from './kubernetes/cluster.ts';
export { priorityClassOf } from './kubernetes/manifests.ts';

/** Agents as StatefulSets on a Kubernetes cluster (kubernetes/cluster.ts says what one agent is). */
export function createKubernetesDriver(options: KubernetesDriverOptions): RuntimeDriver {
  const k = connectCluster(options);
  const podIps: PodAddresses = new Map();
  // The cluster is where agents run: not ready while its API does not answer.
  const withdrawCheck = registerDependency('container-engine', async () => {
    await k.versions.getCode(k.timed);
  });

  return {
    kind: 'kubernetes',
    defaultImage: options.defaultImage,
    updatesInPlace: true,
    async version() {
      const v = await call('version', () => k.versions.getCode(k.timed));
      return { engine: 'kubernetes', version: v.gitVersion };
    },
    create: (spec) => call('create', () => createAgent(k, options, spec)),
    start: (id) => call('start', () => startAgent(k, options, podIps, id)),
    replaceConfig: (id, config) => call('replace config', () => replaceAgentConfig(k, id, config)),
    readConfig: (id) => call('read config', () => readAgentConfig(k, id)),
    // Local volumes are directories of this host; a provisioner's volumes are out of the platform's reach.
    stateDirectory(agentId) {
      const path = localStateDir(options, agentId);
      return path === null ? null : { path, ownerUid: NODE_UID };
    },
    stop: (id) => call('stop', () => stopAgent(k, options, id)),
    restart: (id) => call('restart', () => restartAgent(k, options, podIps, id)),
    inspect: (id) => call('inspect', () => inspectAgent(k, podIps, id)),
    stats: (id) => call('stats', () => podStats(k, id)),
    remove: (id) => call('remove', () => removeAgent(k, options, podIps, id)),
    list: (filter = {}) => call('list', () => listAgents(k, options.instance, filter)),
    removeState: (agentId) => call('remove state', () => removeStateVolume(k, options, agentId)),
    logs: (id, tail) => call('logs', () => readPodLogs(k, id, tail)),
    followLogs: (id, signal) => followPodLogs(k, id, signal),
    events: (signal, onOpen) => followPodEvents(k, options.instance, signal, onOpen),
    gatewayUrl(_hostPort, agentId) {
      // Pod IPs (seen by start/inspect): no Service cluster IP needed, so no kube-proxy. Before one is
      // seen, the headless Service's DNS name (a cluster with DNS and the platform inside it).
      const ip = podIps.get(agentId);
      return ip ? `http://${ip}:${AGENT_PORT}` : `http://${nameOf(agentId)}.${k.namespace}.svc:${AGENT_PORT}`;
    },
    async close() {
      withdrawCheck();
    },
  };
}
