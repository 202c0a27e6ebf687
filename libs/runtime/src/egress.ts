import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const TABLE = ['inet', 'agentyard_egress'];

/**
 * Lets agent containers reach one more of the edge's agent listeners through the host's egress rules
 * (infra/container-engine/up.sh installs them and allows `npm start`'s listener); a test platform
 * opens one of its own on a port of its own. The entry lapses after `ttlSeconds` should its owner die;
 * the answer withdraws it. Where no rules are installed (a Docker host) agents are not confined by
 * them and there is nothing to allow.
 */
export async function allowAgentListener(host: string, port: number, ttlSeconds = 3600): Promise<() => Promise<void>> {
  const installed = await run('nft', ['list', 'table', ...TABLE], { timeout: 5000 }).then(
    () => true,
    () => false,
  );
  if (!installed) return async () => {};
  const element = `${host} . ${port}`;
  await run('nft', ['add', 'element', ...TABLE, 'listeners', `{ ${element} timeout ${ttlSeconds}s }`], {
    timeout: 5000,
  });
  return async () => {
    await run('nft', ['delete', 'element', ...TABLE, 'listeners', `{ ${element} }`], { timeout: 5000 }).catch(
      () => undefined,
    );
  };
}

/** What the production check needs to know of the driver's engine and network settings. */
export interface EgressSettings {
  /** The user-defined network agents join (compose), or ''. */
  network: string;
  /** The engine network mode agents get otherwise (npm start under Podman: slirp4netns with outbound_addr). */
  networkMode: string;
  /** Answers whether the engine's network of that name is internal (no route out). */
  isInternalNetwork(name: string): Promise<boolean>;
}

export const EGRESS_OPT_OUT = 'RUNTIME_EGRESS_UNCONFINED=true';

/**
 * Why agents' egress is not confined, or null when it is: on a user-defined network, that network is
 * internal (its only way out is the egress proxy, docker-compose.yml); on Podman's user-mode network,
 * the host's egress rules (infra/container-engine/up.sh) match the mode's outbound address. Anything
 * else (a Docker bridge, rootless Podman without rules) lets agents reach cloud metadata, the LAN and
 * the platform's own listeners.
 */
export async function unconfinedEgress(settings: EgressSettings): Promise<string | null> {
  const refuse = (why: string) =>
    `agents' egress is not confined: ${why}. Production starts no agent like this: run them on an internal network whose only way out is an egress proxy (docker-compose.yml), or on Podman's user-mode network with the host's egress rules (infra/container-engine/up.sh); or, if the host confines agents' traffic by other means, set ${EGRESS_OPT_OUT} (docs/operations.md)`;
  if (settings.network) {
    const internal = await settings.isInternalNetwork(settings.network);
    return internal ? null : refuse(`the network ${settings.network} is not internal (it routes to anywhere)`);
  }
  const outbound = /^slirp4netns:(?:.*,)?outbound_addr=([0-9.]+)(?:,|$)/.exec(settings.networkMode)?.[1];
  if (!outbound)
    return refuse(`agents get the engine's ${settings.networkMode ? `"${settings.networkMode}"` : 'default'} network`);
  const rules = await run('nft', ['list', 'chain', ...TABLE, 'output'], { timeout: 5000 }).then(
    ({ stdout }) => stdout,
    () => '',
  );
  return rules.includes(`ip saddr ${outbound} jump agent`)
    ? null
    : refuse(`no egress rules for the agents' outbound address ${outbound} on this host`);
}

/** The egress proxy agents get: its URL, the hosts they reach without it, and the key their grants are signed with. */
export interface EgressProxy {
  url: string;
  direct: string[];
  grantKey?: string;
}

/** The egress proxy from the settings, and the hosts agents reach without it (the proxy itself, the AI gateway). */
export function egressProxyOf(settings: {
  RUNTIME_EGRESS_PROXY?: string;
  EGRESS_GRANT_KEY?: string;
  AGENT_AI_GATEWAY_URL?: string;
}): EgressProxy | undefined {
  if (!settings.RUNTIME_EGRESS_PROXY) return undefined;
  const direct = [settings.RUNTIME_EGRESS_PROXY, settings.AGENT_AI_GATEWAY_URL].flatMap(
    (url) => (url && URL.parse(url)?.hostname) || [],
  );
  return {
    url: settings.RUNTIME_EGRESS_PROXY,
    direct: [...new Set(direct)],
    ...(settings.EGRESS_GRANT_KEY ? { grantKey: settings.EGRESS_GRANT_KEY } : {}),
  };
}

/** The environment that sends an agent's HTTP(S) traffic through the egress proxy, except to `direct` hosts. */
export function egressProxyEnv(proxyUrl: string, direct: string[]): string[] {
  const noProxy = ['localhost', '127.0.0.1', '::1', ...direct].join(',');
  // Node (OpenClaw) honours these with NODE_USE_ENV_PROXY; other tools read either spelling.
  return [
    `HTTP_PROXY=${proxyUrl}`,
    `HTTPS_PROXY=${proxyUrl}`,
    `http_proxy=${proxyUrl}`,
    `https_proxy=${proxyUrl}`,
    `NO_PROXY=${noProxy}`,
    `no_proxy=${noProxy}`,
    'NODE_USE_ENV_PROXY=1',
  ];
}
