import os from 'node:os';
import { fetchWithTimeout, type ServiceApp } from '@agentyard/http';
import { IDENTITY_HEADER, signIdentity } from '@agentyard/identity';
import { dependencyStates } from '@agentyard/observability';
import { BackendHealth, WebHealth, type ServiceName } from '@agentyard/proto-schemas';
import type { EdgeConfig } from '../config.ts';
import { serviceCaller } from '../plugins/caller.ts';

export type HealthLevel = 'healthy' | 'degraded' | 'unhealthy';

/** Healthy when CPU and memory are each at most 70 %, degraded up to 85 %, unhealthy above. */
export function healthLevel(cpuPercent: number, memoryPercent: number): HealthLevel {
  const worst = Math.max(cpuPercent, memoryPercent);
  if (worst <= 70) return 'healthy';
  if (worst <= 85) return 'degraded';
  return 'unhealthy';
}

function cpuTimes() {
  let idle = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    idle += cpu.times.idle;
    total += cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.irq + cpu.times.idle;
  }
  return { idle, total };
}

/** Machine CPU use over the last sampling interval, sampled in the background (never on the request path). */
export function startLoadMonitor(intervalMs = 2000) {
  let previous = cpuTimes();
  let cpuPercent = 0;
  const timer = setInterval(() => {
    const now = cpuTimes();
    const total = now.total - previous.total;
    cpuPercent = total > 0 ? 100 * (1 - (now.idle - previous.idle) / total) : 0;
    previous = now;
  }, intervalMs);
  timer.unref();
  return {
    current(): HealthLevel {
      const memoryPercent = 100 * (1 - os.freemem() / os.totalmem());
      return healthLevel(cpuPercent, memoryPercent);
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * The runtime agents run on, as the agents service sees it (`GET /api/runtime/version`, a service
 * call): its driver, and whether its engine (container engine or cluster API) answers. The service
 * down or silent within `timeoutMs`: unreachable.
 */
export async function runtimeReachability(
  agentsOrigin: string,
  identityHeader: string,
  timeoutMs = 2000,
): Promise<{ reachable: boolean; driver?: string }> {
  try {
    const response = await fetchWithTimeout(new URL('/api/runtime/version', agentsOrigin), {
      headers: { [IDENTITY_HEADER]: identityHeader },
      timeoutMs,
    });
    if (!response.ok) return { reachable: false };
    const body = (await response.json()) as { driver?: unknown; reachable?: unknown };
    return { reachable: body.reachable === true, driver: typeof body.driver === 'string' ? body.driver : undefined };
  } catch {
    return { reachable: false };
  }
}

/** `GET /api/health` on the web surface: the machine's load, nothing about what is behind the edge. */
export async function webHealth(app: ServiceApp, options: { health: { current(): HealthLevel } }) {
  app.get('/api/health', { config: { edgeLocal: true }, schema: { response: { 200: WebHealth } } }, async () => ({
    status: 'ok' as const,
    health: options.health.current(),
    timestamp: new Date().toISOString(),
  }));
}

/** `GET /health` on the backend surface: the runtime agents run on, provisioning, and the edge's dependencies. */
export async function backendHealth(
  app: ServiceApp,
  options: { config: EdgeConfig; upstreamOf: (service: ServiceName) => string },
) {
  const { config } = options;
  app.get('/health', { config: { edgeLocal: true }, schema: { response: { 200: BackendHealth } } }, async (request) => {
    // The agents service holds the runtime (docker or a cluster): it says whether its engine answers.
    const asService = signIdentity(serviceCaller(request.id), config.IDENTITY_SECRET, config.IDENTITY_TTL_SECONDS);
    const [runtime, dependencies] = await Promise.all([
      runtimeReachability(options.upstreamOf('agents'), asService),
      dependencyStates(),
    ]);
    return {
      status: 'ok' as const,
      timestamp: new Date().toISOString(),
      docker: runtime.reachable ? ('available' as const) : ('unavailable' as const),
      provisioning: config.PROVISIONING_ENABLED ? ('enabled' as const) : ('disabled' as const),
      provider: runtime.driver ?? config.RUNTIME_DRIVER,
      dependencies,
    };
  });
}
