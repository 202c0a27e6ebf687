import { egressProxyOf } from './egress.ts';
import type { KubernetesDriverOptions } from './kubernetes/cluster.ts';

/** The agents service's KUBERNETES_* settings (services/agents runtime-settings.ts) as it reads them. */
export interface KubernetesSettings {
  KUBERNETES_KUBECONFIG?: string;
  KUBERNETES_NAMESPACE?: string;
  KUBERNETES_STORAGE_CLASS?: string;
  KUBERNETES_LOCAL_STORAGE_DIR?: string;
  KUBERNETES_LOCAL_STORAGE_NODES?: string;
  KUBERNETES_PLATFORM_CIDRS?: string;
  KUBERNETES_AGENT_LISTENERS?: string;
  KUBERNETES_IMAGE_PULL_POLICY?: 'Always' | 'IfNotPresent' | 'Never';
  KUBERNETES_PLAN_PRIORITY_CLASSES?: boolean;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const listOf = (value = '') =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

/**
 * Where agents' model traffic goes, as `IPV4:PORT` for the NetworkPolicy's egress rule: the listeners
 * named, else the AI gateway URL's own address when it is one (a host name cannot be a NetworkPolicy peer).
 */
/** A URL's `IPV4:PORT`, or null when its host is a name (a NetworkPolicy peer is an address). */
export function addressOf(url: string | undefined): string | null {
  const parsed = url ? URL.parse(url) : null;
  if (!parsed || !IPV4.test(parsed.hostname)) return null;
  return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
}

export function agentListenersOf(named: string, aiGatewayUrl: string | undefined): string[] {
  const listeners = listOf(named);
  for (const listener of listeners) {
    const colon = listener.lastIndexOf(':');
    const port = Number(listener.slice(colon + 1));
    if (colon < 0 || !IPV4.test(listener.slice(0, colon)) || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`KUBERNETES_AGENT_LISTENERS: ${listener} is not IPV4:PORT`);
  }
  if (listeners.length) return listeners;
  const address = addressOf(aiGatewayUrl);
  if (!address)
    throw new Error(
      'KUBERNETES_AGENT_LISTENERS is needed when AGENT_AI_GATEWAY_URL is not an IPv4 address: the NetworkPolicy lets agents out only to addresses',
    );
  return [address];
}

/** The kubernetes driver's options from the settings; throws what is missing or malformed. */
export function kubernetesDriverOptions(
  settings: KubernetesSettings & {
    RUNTIME_INSTANCE: string;
    RUNTIME_ENGINE_TIMEOUT_MS: number;
    RUNTIME_STOP_TIMEOUT_SECONDS: number;
    AGENT_AI_GATEWAY_URL?: string;
    RUNTIME_EGRESS_PROXY?: string;
    EGRESS_GRANT_KEY?: string;
  },
  defaultImage: string,
): KubernetesDriverOptions {
  const egressProxy = egressProxyOf(settings);
  // The NetworkPolicy lets agents out to the proxy by its address, as to the agent listener.
  if (egressProxy && !addressOf(egressProxy.url))
    throw new Error(
      'RUNTIME_EGRESS_PROXY must name the proxy by its IPv4 address with RUNTIME_DRIVER=kubernetes: the NetworkPolicy lets agents out only to addresses',
    );
  const platformCidrs = listOf(settings.KUBERNETES_PLATFORM_CIDRS);
  // An ingress rule with no sources lets every source in.
  if (!platformCidrs.length)
    throw new Error(
      'KUBERNETES_PLATFORM_CIDRS is needed with RUNTIME_DRIVER=kubernetes: the only sources an agent pod accepts',
    );
  for (const cidr of platformCidrs) {
    const [ip = '', bits] = cidr.split('/');
    if (!IPV4.test(ip) || !/^\d{1,2}$/.test(bits ?? '') || Number(bits) > 32)
      throw new Error(`KUBERNETES_PLATFORM_CIDRS: ${cidr} is not an IPv4 CIDR`);
  }
  const storageClassName = settings.KUBERNETES_STORAGE_CLASS ?? '';
  const localDir = settings.KUBERNETES_LOCAL_STORAGE_DIR ?? '';
  if (Boolean(storageClassName) === Boolean(localDir))
    throw new Error(
      "set one of KUBERNETES_STORAGE_CLASS (a cluster's provisioner) and KUBERNETES_LOCAL_STORAGE_DIR (local volumes)",
    );
  const nodes = listOf(settings.KUBERNETES_LOCAL_STORAGE_NODES);
  if (localDir && !nodes.length)
    throw new Error(
      'KUBERNETES_LOCAL_STORAGE_DIR needs KUBERNETES_LOCAL_STORAGE_NODES: the nodes that share that directory',
    );
  return {
    kubeconfig: settings.KUBERNETES_KUBECONFIG ?? '',
    namespace: settings.KUBERNETES_NAMESPACE || 'agentyard-agents',
    instance: settings.RUNTIME_INSTANCE,
    defaultImage,
    timeoutMs: settings.RUNTIME_ENGINE_TIMEOUT_MS,
    stopTimeoutSeconds: settings.RUNTIME_STOP_TIMEOUT_SECONDS,
    platformCidrs,
    agentListeners: agentListenersOf(settings.KUBERNETES_AGENT_LISTENERS ?? '', settings.AGENT_AI_GATEWAY_URL),
    storage: localDir ? { localDir, nodes } : { storageClassName },
    imagePullPolicy: settings.KUBERNETES_IMAGE_PULL_POLICY ?? 'IfNotPresent',
    planPriorityClasses: settings.KUBERNETES_PLAN_PRIORITY_CLASSES ?? false,
    ...(egressProxy ? { egressProxy } : {}),
  };
}
