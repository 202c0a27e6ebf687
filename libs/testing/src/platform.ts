import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { repoRoot, SERVICE_NAMES, type ServiceName } from '@agentyard/config';

/** A port nothing listens on (for services a platform does not start: the edge answers 502). */
async function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface Platform {
  webUrl: string;
  backendUrl: string;
  env: NodeJS.ProcessEnv;
  /** Process id of each started process by name (`edge`, `auth`, ...), for benchmarks that account CPU. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

/**
 * Starts real processes (the given services and the edge) on loopback with this run's environment.
 * Each binds port 0 and reports the ports it got over its IPC channel, so parallel test files never
 * race for a port; the edge starts last, pointed at the services' actual ports.
 */
export async function startPlatform(services: ServiceName[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Platform> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  for (const name of SERVICE_NAMES) if (!services.includes(name)) env[`${name.toUpperCase()}_PORT`] = String(await unusedPort());
  const children: ChildProcess[] = [];
  const pids: Record<string, number> = {};
  const start = (name: string, entry: string, childEnv: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, [join(repoRoot, entry)], { env: childEnv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    children.push(child);
    if (child.pid) pids[name] = child.pid;
    return listeningPorts(entry, child);
  };
  const stop = async () => {
    await Promise.all(children.map((child) => child.exitCode === null && child.signalCode === null
      ? new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM'); })
      : undefined));
  };
  try {
    await Promise.all(services.map(async (name) => {
      const variable = `${name.toUpperCase()}_PORT`;
      const [port] = await start(name, `services/${name}/src/main.ts`, { ...env, [variable]: '0' });
      env[variable] = String(port);
    }));
    const [web, backend] = await start('edge', 'services/edge/src/main.ts', { ...env, EDGE_WEB_PORT: '0', EDGE_BACKEND_PORT: '0' });
    env.EDGE_WEB_PORT = String(web);
    env.EDGE_BACKEND_PORT = String(backend);
  } catch (error) {
    await stop();
    throw error;
  }
  return { webUrl: `http://127.0.0.1:${env.EDGE_WEB_PORT}`, backendUrl: `http://127.0.0.1:${env.EDGE_BACKEND_PORT}`, env, pids, stop };
}

/** The ports a child reports once it listens (see runServices in @agentyard/http). */
function listeningPorts(entry: string, child: ChildProcess): Promise<number[]> {
  return new Promise((resolve, reject) => {
    // Generous: on a loaded machine (many test files starting services at once) a start took over 30 s.
    const timer = setTimeout(() => fail(new Error(`${entry} did not listen within 300 s`)), 300_000);
    const onMessage = (message: { type?: string; ports?: number[] }) => {
      if (message?.type !== 'listening' || !message.ports) return;
      cleanup();
      resolve(message.ports);
    };
    const onExit = (code: number | null, signal: string | null) => fail(new Error(`${entry} exited with ${code ?? signal} before listening`));
    const fail = (error: Error) => { cleanup(); reject(error); };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
