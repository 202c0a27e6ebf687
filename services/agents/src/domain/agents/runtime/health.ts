import { setTimeout as delay } from 'node:timers/promises';
import { probeAgent } from '@agentyard/agent-gateway';
import type { RuntimeDriver } from '@agentyard/runtime';
import type { AgentRow } from '../shapes.ts';

export type ContainerHealth = 'healthy' | 'starting' | 'running' | 'stopped' | 'suspended' | 'not_found' | 'error';

export interface AgentHealthOptions {
  driver: RuntimeDriver;
  readyTimeoutMs: number;
  probeTimeoutMs: number;
}

/** What the engine and the agent's gateway say about an agent's container. */
export function agentHealth(options: AgentHealthOptions) {
  const { driver } = options;

  async function waitUntilReady(gatewayUrl: string, timeoutMs = options.readyTimeoutMs): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const probe = await probeAgent(gatewayUrl, Math.min(options.probeTimeoutMs, Math.max(100, deadline - Date.now())));
      if (probe.ready === true) return true;
      await delay(250);
    }
    return false;
  }

  async function health(agent: AgentRow): Promise<ContainerHealth> {
    if (agent.status === 'suspended') return 'suspended';
    if (!agent.container_id) return 'not_found';
    const info = await driver.inspect(agent.container_id).catch(() => undefined);
    if (info === undefined) return 'error';
    if (info === null) return 'not_found';
    if (info.state === 'dead') return 'error';
    if (info.state !== 'running' && info.state !== 'restarting') return 'stopped';
    const probe = await probeAgent(agent.gateway_url ?? driver.gatewayUrl(info.hostPort ?? agent.host_port ?? 0, agent.id), options.probeTimeoutMs);
    return probe.live ? 'healthy' : 'starting';
  }

  return { health, waitUntilReady };
}
