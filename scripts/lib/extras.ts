import { infra } from './platform.ts';
import { agentListenerEnv, externalIpv4 } from './processes.ts';

/**
 * Further parts the platform needs beyond PostgreSQL and Redis (container engine, agent images),
 * prepared before the services start; returns the settings they add to the environment.
 * RUNTIME_DRIVER=process skips the engine; when no engine can be had, agents run as processes.
 */
export async function preparePlatformExtras(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const extras: Record<string, string> = {};
  // Containers of a test run carry its own label, so its teardown removes exactly its containers.
  if (env.NODE_ENV === 'test' && env.QUEUE_PREFIX && !env.RUNTIME_INSTANCE) extras.RUNTIME_INSTANCE = env.QUEUE_PREFIX;
  if (env.RUNTIME_DRIVER === 'process') return extras;
  let dockerHost: string;
  try {
    dockerHost = infra('container-engine/up.sh').split('\n').at(-1)!;
    infra('agent-image/build.sh', ['all']);
  } catch (error) {
    console.error(`no container engine or agent image (${(error as Error).message.split('\n')[0]}); agents run as local processes (RUNTIME_DRIVER=process)`);
    return { ...extras, RUNTIME_DRIVER: 'process' };
  }
  Object.assign(extras, { RUNTIME_DRIVER: 'docker', DOCKER_HOST: dockerHost });
  // Under Podman each agent gets a user-mode network of its own (slirp4netns): agents cannot reach
  // each other as on the shared bridge, and a launch skips netavark's lock and its ~20 iptables
  // calls (measured one at a time: create+start ~145 ms instead of ~215 ms; removal twice as fast).
  if (dockerHost.includes('podman') && !env.RUNTIME_NETWORK_MODE) {
    // Without host loopback: PostgreSQL and Redis listen there and trust local callers. Agents send
    // model traffic to the edge's agent listener on the host's own address instead.
    extras.RUNTIME_NETWORK_MODE = 'slirp4netns';
    const hostAddress = env.AGENT_AI_GATEWAY_URL ? undefined : externalIpv4();
    if (hostAddress && env.NODE_ENV === 'test') {
      // Each test platform opens its own agent listener there, on a port of its own (startPlatform).
      extras.EDGE_AGENT_HOST = hostAddress;
    } else if (hostAddress) {
      Object.assign(extras, agentListenerEnv(hostAddress, env.EDGE_AGENT_PORT ?? '3002'));
    } else if (!env.AGENT_AI_GATEWAY_URL) {
      console.error('no non-loopback IPv4 address on this host: agents cannot reach the AI gateway (set AGENT_AI_GATEWAY_URL)');
    }
  }
  return extras;
}
