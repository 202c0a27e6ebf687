import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { repoRoot, SERVICE_PORTS, type ServiceName } from '@agentyard/config';

async function freePort(): Promise<number> {
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
  stop(): Promise<void>;
}

/**
 * Starts real processes (the given services and the edge) on free loopback ports with this run's
 * environment, resolving once each listens. For end-to-end tests through the edge over HTTP.
 */
export async function startPlatform(services: ServiceName[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Platform> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  for (const name of Object.keys(SERVICE_PORTS) as ServiceName[]) env[`${name.toUpperCase()}_PORT`] = String(await freePort());
  env.EDGE_WEB_PORT = String(await freePort());
  env.EDGE_BACKEND_PORT = String(await freePort());
  const children: ChildProcess[] = [];
  const start = (entry: string, url: string) => {
    const child = spawn(process.execPath, [join(repoRoot, entry)], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(child);
    return waitUntilListening(url, child);
  };
  const stop = async () => {
    await Promise.all(children.map((child) => child.exitCode === null && child.signalCode === null
      ? new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM'); })
      : undefined));
  };
  try {
    await Promise.all(services.map((name) => start(`services/${name}/src/main.ts`, `http://127.0.0.1:${env[`${name.toUpperCase()}_PORT`]}/`)));
    await start('services/edge/src/main.ts', `http://127.0.0.1:${env.EDGE_WEB_PORT}/api/health`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { webUrl: `http://127.0.0.1:${env.EDGE_WEB_PORT}`, backendUrl: `http://127.0.0.1:${env.EDGE_BACKEND_PORT}`, env, stop };
}

async function waitUntilListening(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited with ${child.exitCode}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`${url} did not listen within 30 s`);
}
