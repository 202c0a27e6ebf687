import { infra } from './platform.ts';

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
    // The bridge cannot reach services bound to the host's loopback (the backend edge, where agents
    // send model traffic); slirp4netns with host loopback can, at 10.0.2.2.
    if (env.NODE_ENV !== 'test' && !env.AGENT_AI_GATEWAY_URL) {
      extras.RUNTIME_NETWORK_MODE = 'slirp4netns:allow_host_loopback=true';
      extras.AGENT_AI_GATEWAY_URL = `http://10.0.2.2:${env.EDGE_BACKEND_PORT ?? '3001'}`;
    } else extras.RUNTIME_NETWORK_MODE = 'slirp4netns';
  }
  return extras;
}
