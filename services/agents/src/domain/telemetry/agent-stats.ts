import { probeAgent } from '@agentyard/agent-gateway';
import type { AgentsConfig } from '../../config.ts';
import { AgentErrors } from '../../errors.ts';
import type { RuntimeContext } from '../runtime/privileged/runtime-context.ts';
import type { AgentRow } from '../agents/agent-views.ts';

/** Stats from the runtime; when it cannot answer, the gateway's own probes with cpu and memory `—`; 502 when neither answers. */
export async function agentStats(
  context: Pick<RuntimeContext, 'runtime' | 'driver'>,
  config: Pick<AgentsConfig, 'AGENT_PROBE_TIMEOUT_MS' | 'AGENT_ANSWER_MAX_BYTES'>,
  row: AgentRow,
) {
  const health = await context.runtime.health(row);
  const stats = row.container_id ? await context.driver.stats(row.container_id).catch(() => null) : null;
  if (stats)
    return {
      id: row.id,
      status: row.status,
      health,
      cpu: stats.cpuPercent,
      memory: stats.memoryBytes,
      memoryLimit: stats.memoryLimitBytes,
      source: 'runtime' as const,
    };
  const probe = row.gateway_url
    ? await probeAgent(row.gateway_url, config.AGENT_PROBE_TIMEOUT_MS, config.AGENT_ANSWER_MAX_BYTES)
    : { live: false, ready: null };
  if (!probe.live) throw AgentErrors.unreachable(row.id, health);
  return {
    id: row.id,
    status: probe.ready ? 'ready' : 'live',
    health,
    cpu: '—' as const,
    memory: '—' as const,
    memoryLimit: '—' as const,
    source: 'probe' as const,
  };
}
