import os from 'node:os';
import { fetchWithTimeout } from '@agentyard/http';
import { IDENTITY_HEADER } from '@agentyard/identity';

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
