import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivateEngine {
  /** `unix://…`: a DOCKER_HOST for the platform under test. */
  dockerHost: string;
  /** Stops this API process (SIGTERM), as a restart of the engine's service does: the containers run on. */
  stop(): Promise<void>;
  /** Starts the API process again, on the same socket; resolves once it answers `/_ping`. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Why this machine cannot run a Podman API of a test's own; false when it can. */
export function noPrivateEngine(): string | false {
  try {
    execFileSync('podman', ['--version'], { stdio: 'ignore', timeout: 10_000 });
    return false;
  } catch {
    return 'no podman on this machine';
  }
}

const ping = (socketPath: string) =>
  new Promise<boolean>((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });

/**
 * A Podman API service of this test's own (`podman system service` on a socket of its own) over the
 * machine's containers and storage: a test can stop and restart the engine's API under a platform
 * while every other test file keeps using the machine's. Containers are run by Podman's monitor
 * processes, not by the API, so they live on while it is away, as they do under a real restart.
 */
export async function startPrivateEngine(): Promise<PrivateEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-engine-'));
  const socketPath = join(dir, 'podman.sock');
  let service: ChildProcess | undefined;
  const start = async () => {
    const child = spawn('podman', ['system', 'service', '--time=0', `unix://${socketPath}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    service = child;
    let said = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      if (said.length < 20_000) said += chunk;
    });
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`podman system service exited with ${code} before it answered: ${said.slice(-500)}`);
    });
    const deadline = Date.now() + 60_000;
    // The socket answers once the service has opened its storage: no event says so but the answer.
    const answering = (async () => {
      while (!(await ping(socketPath))) {
        if (Date.now() > deadline)
          throw new Error(`podman system service did not answer within 60 s: ${said.slice(-500)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await Promise.race([answering, exited]);
    exited.catch(() => undefined);
  };
  const stop = async () => {
    const child = service;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  await start();
  const onExit = () => {
    service?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    dockerHost: `unix://${socketPath}`,
    stop,
    start,
    async close() {
      process.off('exit', onExit);
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
