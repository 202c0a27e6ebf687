import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { repoRoot, SERVICE_NAMES } from '@agentyard/config';
import { tracingArgs } from '@agentyard/observability';

export interface Running {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

export interface PlatformProcess {
  /** `auth`, `auth worker`, …, `edge`. */
  name: string;
  /** The service it belongs to (`edge` for the edge). */
  service: string;
  kind: 'app' | 'worker';
  entry: string;
}

/**
 * Node's on-disk code cache for every process the platform and its tests start (a whole platform is
 * eleven processes that each load thousands of modules: about a fifth less CPU to start with it,
 * docs/benchmarks.md). Under node_modules, so `npm ci` starts it afresh; NODE_COMPILE_CACHE set by
 * the caller wins.
 */
export function compileCacheEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return {
    NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE ?? join(repoRoot, 'node_modules', '.cache', 'node-compile-cache'),
  };
}

/**
 * Every process of the platform: each service's HTTP app and worker (where it has one), then the
 * edge. `npm start` and the test platform (@agentyard/testing startPlatform) both start these.
 */
export function platformProcesses(): PlatformProcess[] {
  const out: PlatformProcess[] = [];
  for (const service of [...SERVICE_NAMES, 'edge']) {
    for (const [kind, suffix, file] of [
      ['app', '', 'main.ts'],
      ['worker', ' worker', 'worker.ts'],
    ] as const) {
      const entry = join(repoRoot, 'services', service, 'src', file);
      if (existsSync(entry)) out.push({ name: `${service}${suffix}`, service, kind, entry });
    }
  }
  return out;
}

/**
 * The edge's agent listener on `host:port` and agents' model traffic pointed at it: agent
 * containers without the host's loopback (slirp4netns) reach the platform only there, on the
 * host's own address, so it is named as exposed (outside production the edge serves loopback only).
 */
export function agentListenerEnv(host: string, port: number | string): Record<string, string> {
  return {
    EDGE_AGENT_HOST: host,
    EDGE_AGENT_PORT: String(port),
    AGENT_AI_GATEWAY_URL: `http://${host}:${port}`,
    EDGE_EXPOSED_LISTENERS: 'agent',
  };
}

/** The host's first non-loopback IPv4 address: what a container's user-mode network reaches it at. */
export function externalIpv4(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
}

// Children left running when the supervisor exits (a crash included) are killed: one listener for all.
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts one process with `env`, its output prefixed with its name (or discarded when `quiet`). */
export function startProcess(name: string, entry: string, env: NodeJS.ProcessEnv, quiet = false): Running {
  // A process group of its own: Ctrl-C reaches only the supervisor, which then stops each child
  // once (a second signal would make close-with-grace skip the graceful close).
  const child = spawn(process.execPath, [...tracingArgs(env), entry], {
    env,
    detached: true,
    stdio: ['ignore', quiet ? 'ignore' : 'pipe', quiet ? 'ignore' : 'pipe'],
  });
  children.add(child);
  const prefix = `[${name}] `;
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) process.stdout.write(prefix + line + '\n');
    });
  }
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { name, child, exited };
}

/** SIGTERM to all, then waits for each (they close gracefully within their own deadline). */
export async function stopAll(running: Running[]): Promise<void> {
  for (const r of running) if (r.child.exitCode === null) r.child.kill('SIGTERM');
  await Promise.all(running.map((r) => r.exited));
}

/**
 * Resolves once a process's operations listener says it is ready (`/readyz` 200: listening, and its
 * PostgreSQL, Redis and engine answer), or rejects after `timeoutMs` with the last answer's reasons.
 */
export async function waitForReady(opsUrl: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    try {
      const response = await fetch(`${opsUrl}/readyz`, { signal: AbortSignal.timeout(5000) });
      if (response.status === 200) return;
      last = await response.text();
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${opsUrl}/readyz was not ready within ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
