import { infra } from './platform.ts';
import { agentListenerEnv, externalIpv4 } from './processes.ts';

/**
 * The source address of agents' traffic under Podman: each agent's user-mode network (slirp4netns)
 * binds its host-side sockets to it, and infra/container-engine/up.sh installs the egress rules
 * matching it (only the edge's agent listener and DNS among private and host addresses).
 */
export const AGENT_EGRESS_ADDRESS = '198.18.255.1';

/** What `npm start` prints when agents run as local processes. */
export const PROCESS_DRIVER_BANNER = `
************************************************************************************************
*  AGENTS ARE NOT ISOLATED: RUNTIME_DRIVER=process runs every tenant's agent as this machine's  *
*  own OS user, with the platform's secrets, files, database and network in reach. Development *
*  only (production refuses it). Install a container engine (infra/container-engine/up.sh) for *
*  isolated agents.                                                                            *
************************************************************************************************`;

/**
 * Further parts the platform needs beyond PostgreSQL and Redis (container engine, agent images),
 * prepared before the services start; returns the settings they add to the environment.
 * RUNTIME_DRIVER=process skips the engine; when no engine can be had, agents run as processes,
 * except in production, which refuses to run tenants' agents unisolated.
 */
export async function preparePlatformExtras(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const extras: Record<string, string> = {};
  // Containers of a test run carry its own label, so its teardown removes exactly its containers.
  if (env.NODE_ENV === 'test' && env.QUEUE_PREFIX && !env.RUNTIME_INSTANCE) extras.RUNTIME_INSTANCE = env.QUEUE_PREFIX;
  if (env.RUNTIME_DRIVER === 'process') return extras;
  // The edge's agent listener (on the host's own address): the one host address agents may reach.
  // Tests open one per platform on a port of its own and allow it themselves (startPlatform).
  const hostAddress = env.AGENT_AI_GATEWAY_URL ? undefined : externalIpv4();
  const agentListener =
    hostAddress && env.NODE_ENV !== 'test'
      ? `${hostAddress}:${env.EDGE_AGENT_PORT ?? '3002'}`
      : listenerOf(env.AGENT_AI_GATEWAY_URL);
  let dockerHost: string;
  try {
    dockerHost = infra('container-engine/up.sh', [
      '--agent-egress-address',
      AGENT_EGRESS_ADDRESS,
      ...(agentListener ? ['--agent-listener', agentListener] : []),
    ])
      .split('\n')
      .at(-1)!;
    infra('agent-image/build.sh', ['all']);
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    if (env.NODE_ENV === 'production')
      throw new Error(`no container engine or agent image (${reason}); production runs agents only in containers`);
    console.error(
      `no container engine or agent image (${reason}); agents run as local processes (RUNTIME_DRIVER=process)`,
    );
    return { ...extras, RUNTIME_DRIVER: 'process' };
  }
  Object.assign(extras, { RUNTIME_DRIVER: 'docker', DOCKER_HOST: dockerHost });
  // Under Podman each agent gets a user-mode network of its own (slirp4netns): agents cannot reach
  // each other as on the shared bridge, and a launch skips netavark's lock and its ~20 iptables
  // calls (measured one at a time: create+start ~145 ms instead of ~215 ms; removal twice as fast).
  if (dockerHost.includes('podman') && !env.RUNTIME_NETWORK_MODE && !env.RUNTIME_NETWORK) {
    // Without host loopback (PostgreSQL and Redis listen there and trust local callers) and without
    // IPv6; its host-side sockets use the egress address, which the host's egress rules confine.
    extras.RUNTIME_NETWORK_MODE = `slirp4netns:allow_host_loopback=false,enable_ipv6=false,outbound_addr=${AGENT_EGRESS_ADDRESS}`;
    // Agents send model traffic to the edge's agent listener on the host's own address.
    if (hostAddress && env.NODE_ENV === 'test')
      Object.assign(extras, { EDGE_AGENT_HOST: hostAddress, EDGE_EXPOSED_LISTENERS: 'agent' });
    else if (hostAddress) Object.assign(extras, agentListenerEnv(hostAddress, env.EDGE_AGENT_PORT ?? '3002'));
    else if (!env.AGENT_AI_GATEWAY_URL) {
      console.error(
        'no non-loopback IPv4 address on this host: agents cannot reach the AI gateway (set AGENT_AI_GATEWAY_URL)',
      );
    }
  }
  return extras;
}

/** `<IPv4>:<port>` of an AI gateway URL given by address (the egress rules allow addresses, not names). */
function listenerOf(url: string | undefined): string | undefined {
  const parsed = url ? URL.parse(url) : null;
  if (!parsed || !/^\d{1,3}(\.\d{1,3}){3}$/.test(parsed.hostname)) return undefined;
  return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
}

/**
 * Debian's Chromium for the console's browser tests (infra/browser/up.sh installs it once); answers
 * its path, or undefined (saying why) where it cannot be had, and the browser tests skip.
 */
export function prepareBrowser(env: NodeJS.ProcessEnv): string | undefined {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  try {
    return infra('browser/up.sh').split('\n').at(-1);
  } catch (error) {
    console.error(`no browser for the console's tests (${(error as Error).message.split('\n')[0]})`);
    return undefined;
  }
}
