import { setTimeout as delay } from 'node:timers/promises';
import { probeAgent } from '@agentyard/agent-gateway';
import { fetchWithTimeout } from '@agentyard/http';
import type { RuntimeDriver } from '@agentyard/runtime';
import type { AgentRow } from '../agents/agent-views.ts';

export type ContainerHealth = 'healthy' | 'starting' | 'running' | 'stopped' | 'suspended' | 'not_found' | 'error';

export interface AgentHealthOptions {
  driver: RuntimeDriver;
  readyTimeoutMs: number;
  probeTimeoutMs: number;
}

/** What the engine and the agent's gateway say about an agent's container. */
export function agentHealth(options: AgentHealthOptions) {
  const { driver } = options;

  /** Whether the gateway takes `gatewayToken` (401 until a hot reload has applied the config holding it). */
  async function takesToken(gatewayUrl: string, gatewayToken: string, timeoutMs: number): Promise<boolean> {
    try {
      const response = await fetchWithTimeout(new URL('/v1/models', gatewayUrl), {
        headers: { authorization: `Bearer ${gatewayToken}` },
        timeoutMs,
      });
      await response.body?.cancel().catch(() => {});
      return response.ok;
    } catch {
      return false;
    }
  }

  /** Until the gateway answers /readyz (and, given the agent's token, takes it), polling every 100 ms. */
  async function waitUntilReady(
    gatewayUrl: string,
    timeoutMs = options.readyTimeoutMs,
    gatewayToken?: string,
  ): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const probeTimeout = Math.min(options.probeTimeoutMs, Math.max(100, deadline - Date.now()));
      const probe = await probeAgent(gatewayUrl, probeTimeout);
      if (
        probe.ready === true &&
        (gatewayToken === undefined || (await takesToken(gatewayUrl, gatewayToken, probeTimeout)))
      )
        return true;
      await delay(100);
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
    const probe = await probeAgent(
      agent.gateway_url ?? driver.gatewayUrl(info.hostPort ?? agent.host_port ?? 0, agent.id),
      options.probeTimeoutMs,
    );
    return probe.live ? 'healthy' : 'starting';
  }

  return { health, waitUntilReady };
}
