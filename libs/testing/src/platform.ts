import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import { SERVICE_NAMES } from '@agentyard/config';
import type { ServiceName } from '@agentyard/proto-schemas';
import { tracingArgs } from '@agentyard/observability';
import { allowAgentListener } from '@agentyard/runtime';
import { agentListenerEnv, platformProcesses, type PlatformProcess } from '../../../scripts/lib/processes.ts';

/** A port nothing listens on at `host` (for services a platform does not start: the edge answers 502). */
async function unusedPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface PlatformOptions {
  /** Also start each started service's worker process (`services/<name>/src/worker.ts`), as npm start does. */
  workers?: boolean;
  /** Processes (`edge`, `agents worker`, …) whose log lines are kept for `logs`; the others' are discarded. */
  logsOf?: string[];
  /** How long each process may take to listen (120 s; a whole platform on a busy small machine needs more). */
  listenTimeoutMs?: number;
  /**
   * The edge's web listener is PUBLIC_BASE_URL itself (its port picked here, not by the edge), so a
   * browser reaches the platform without request interception: Chromium lets no route answer a
   * download (playwright#38585).
   */
  webAtPublicUrl?: boolean;
}

/** The kept log lines of some processes, and a way to await one. */
export class PlatformLogs {
  private readonly kept = new Map<string, string[]>();
  private readonly events = new EventEmitter();

  add(process: string, line: string): void {
    const lines = this.kept.get(process) ?? [];
    lines.push(line);
    this.kept.set(process, lines);
    this.events.emit('line', process, line);
  }

  /** Every line kept so far of `process`. */
  lines(process: string): string[] {
    return [...(this.kept.get(process) ?? [])];
  }

  /** The first line of `process` (already kept or still to come) that `matches`; rejects after `timeoutMs`. */
  waitFor(process: string, matches: (line: string) => boolean, timeoutMs: number): Promise<string> {
    const found = this.lines(process).find(matches);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const onLine = (from: string, line: string) => {
        if (from !== process || !matches(line)) return;
        clearTimeout(timer);
        this.events.off('line', onLine);
        resolve(line);
      };
      const timer = setTimeout(() => {
        this.events.off('line', onLine);
        reject(new Error(`no such line of ${process} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.events.on('line', onLine);
    });
  }
}

export interface Platform {
  webUrl: string;
  backendUrl: string;
  /** The edge's agent listener (what agent containers reach), when EDGE_AGENT_HOST is set. */
  agentUrl: string | undefined;
  env: NodeJS.ProcessEnv;
  /** Process id of each started process by name (`edge`, `auth`, `auth worker`, ...), for benchmarks that account CPU. */
  pids: Record<string, number>;
  /** Each started process's operations listener (`/livez`, `/readyz`, `/metrics`) by name. */
  opsUrls: Record<string, string>;
  logs: PlatformLogs;
  stop(): Promise<void>;
}

/** Services that call another service themselves, not through the edge (the AI gateway's `agent` plugin asks the agents service for a turn). */
const CALLS_DIRECTLY: Partial<Record<ServiceName, ServiceName[]>> = { ai: ['agents'] };

/**
 * Starts real processes (the given services, their workers when asked, and the edge) with this
 * run's environment, from the same list of processes `npm start` starts. Each service binds port 0
 * and reports the ports it got over its IPC channel, so parallel test files never race for a port;
 * workers start once the services listen, the edge last, pointed at the services' actual ports.
 * With EDGE_AGENT_HOST set (npm test sets the host's own address, as npm start does) the edge also
 * opens its agent listener there, and agents' model traffic is pointed at it.
 */
export async function startPlatform(
  services: ServiceName[],
  extraEnv: NodeJS.ProcessEnv = {},
  options: PlatformOptions = {},
): Promise<Platform> {
  // Operations listeners on free ports too (each reports its own), unless a test names one.
  const env: NodeJS.ProcessEnv = { ...process.env, OPS_PORT: '0', ...extraEnv };
  if (options.webAtPublicUrl) {
    env.EDGE_WEB_PORT = String(await unusedPort());
    env.PUBLIC_BASE_URL = `http://127.0.0.1:${env.EDGE_WEB_PORT}`;
  }
  for (const name of SERVICE_NAMES)
    if (!services.includes(name)) env[`${name.toUpperCase()}_PORT`] = String(await unusedPort());
  // Agents are told where the listener is before it opens: its port is picked here, not by the edge.
  let agentUrl: string | undefined;
  let withdrawListener = async () => {};
  if (env.EDGE_AGENT_HOST) {
    const port = extraEnv.EDGE_AGENT_PORT ?? (await unusedPort(env.EDGE_AGENT_HOST));
    const listener = agentListenerEnv(env.EDGE_AGENT_HOST, port);
    // The host's egress rules let agents reach only allowed listeners: this platform's joins them.
    withdrawListener = await allowAgentListener(env.EDGE_AGENT_HOST, Number(port));
    agentUrl = listener.AGENT_AI_GATEWAY_URL;
    Object.assign(
      env,
      listener,
      extraEnv.AGENT_AI_GATEWAY_URL ? { AGENT_AI_GATEWAY_URL: extraEnv.AGENT_AI_GATEWAY_URL } : {},
    );
  }
  const processes = platformProcesses();
  const chosen = (kind: PlatformProcess['kind']) =>
    processes.filter((p) => p.kind === kind && services.includes(p.service as ServiceName));
  const edge = processes.find((p) => p.service === 'edge' && p.kind === 'app')!;
  const kept = new Set(options.logsOf ?? []);
  const logs = new PlatformLogs();
  const children: ChildProcess[] = [];
  const pids: Record<string, number> = {};
  const opsUrls: Record<string, string> = {};
  const start = ({ name, entry }: PlatformProcess, childEnv: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, [...tracingArgs(childEnv), entry], {
      env: childEnv,
      stdio: ['ignore', kept.has(name) ? 'pipe' : 'ignore', 'inherit', 'ipc'],
    });
    children.push(child);
    if (child.pid) pids[name] = child.pid;
    if (child.stdout) keepLines(child.stdout, (line) => logs.add(name, line));
    return listeningPorts(entry, child, options.listenTimeoutMs ?? 120_000).then(({ ports, opsPort }) => {
      if (opsPort) opsUrls[name] = `http://${childEnv.OPS_HOST || '127.0.0.1'}:${opsPort}`;
      return ports;
    });
  };
  const stop = async () => {
    await Promise.all(
      children.map((child) =>
        child.exitCode === null && child.signalCode === null
          ? new Promise((resolve) => {
              child.once('exit', resolve);
              child.kill('SIGTERM');
            })
          : undefined,
      ),
    );
    await withdrawListener();
  };
  try {
    // Services listen on ports of their own choosing; one that calls another directly starts once that one listens, so it is told where.
    const apps = chosen('app');
    const callsAStartedService = (app: PlatformProcess) =>
      (CALLS_DIRECTLY[app.service as ServiceName] ?? []).some((callee) => services.includes(callee));
    for (const wave of [apps.filter((app) => !callsAStartedService(app)), apps.filter(callsAStartedService)])
      await Promise.all(
        wave.map(async (app) => {
          const variable = `${app.service.toUpperCase()}_PORT`;
          const [port] = await start(app, { ...env, [variable]: '0' });
          env[variable] = String(port);
        }),
      );
    const edgeStarted = start(edge, {
      ...env,
      EDGE_WEB_PORT: options.webAtPublicUrl ? env.EDGE_WEB_PORT : '0',
      EDGE_BACKEND_PORT: '0',
    });
    await Promise.all([...(options.workers ? chosen('worker').map((worker) => start(worker, env)) : []), edgeStarted]);
    const [web, backend] = await edgeStarted;
    env.EDGE_WEB_PORT = String(web);
    env.EDGE_BACKEND_PORT = String(backend);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    webUrl: `http://127.0.0.1:${env.EDGE_WEB_PORT}`,
    backendUrl: `http://127.0.0.1:${env.EDGE_BACKEND_PORT}`,
    agentUrl,
    env,
    pids,
    opsUrls,
    logs,
    stop,
  };
}

/** Every service npm start runs (each with its worker) and the edge: the whole platform, as `npm start` starts it. */
export function startWholePlatform(
  extraEnv: NodeJS.ProcessEnv = {},
  options: Omit<PlatformOptions, 'workers'> = {},
): Promise<Platform> {
  const services = [...new Set(platformProcesses().map((p) => p.service))].filter((s): s is ServiceName =>
    (SERVICE_NAMES as string[]).includes(s),
  );
  return startPlatform(services, extraEnv, { ...options, workers: true });
}

/** Calls `onLine` with each whole line of a stream. */
function keepLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
}

/** The ports a child reports once it listens (see runServices in @agentyard/http; a worker process reports none). */
function listeningPorts(
  entry: string,
  child: ChildProcess,
  timeoutMs: number,
): Promise<{ ports: number[]; opsPort?: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${entry} did not listen within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: { type?: string; ports?: number[]; opsPort?: number }) => {
      if (message?.type !== 'listening' || !message.ports) return;
      cleanup();
      resolve({ ports: message.ports, opsPort: message.opsPort });
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(new Error(`${entry} exited with ${code ?? signal} before listening`));
    const fail = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
