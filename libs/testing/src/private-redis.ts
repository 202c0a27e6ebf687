import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './private-postgres.ts';

export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGTERM (as `docker restart` sends: Redis flushes its append-only file), then a new server on the same folder. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A redis-server of this test's own, run as the production compose runs it (append-only file,
 * `noeviction`), on its own port and folder: for tests that restart Redis while the machine's shared
 * one serves every other test file.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-redis-'));
  const port = await freePort();
  let server: ChildProcess | undefined;
  const start = async () => {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    server = child;
    // Ready once it has loaded its append-only file and says so.
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before it was ready: ${seen.slice(-500)}`)));
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        if (seen.length < 20_000) seen += chunk;
        if (/Ready to accept connections/.test(seen)) resolve();
      });
    });
    child.stdout!.resume();
  };
  const stopServer = async () => {
    const child = server;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  await start();
  let stopped = false;
  // A test process that ends without its teardown takes its server with it.
  const onExit = () => {
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart() {
      await stopServer();
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', onExit);
      await stopServer();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
