import http from 'node:http';
import os from 'node:os';

export type HealthLevel = 'healthy' | 'degraded' | 'unhealthy';

/** Spec §8: healthy when CPU and memory are each at most 70 %, degraded up to 85 %, unhealthy above. */
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

/** Whether the container engine at DOCKER_HOST answers `/_ping` within `timeoutMs`. */
export function pingContainerEngine(dockerHost: string, timeoutMs = 2000): Promise<boolean> {
  const target = dockerHost.startsWith('unix://')
    ? { socketPath: dockerHost.slice('unix://'.length) }
    : (() => {
        const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
        return { host: url.hostname, port: Number(url.port || 2375) };
      })();
  return new Promise((resolve) => {
    const request = http.request({ ...target, path: '/_ping', method: 'GET', timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
    request.end();
  });
}
