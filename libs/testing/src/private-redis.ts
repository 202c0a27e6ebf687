import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './private-postgres.ts';

export interface PrivateRedis {
  url: string;
  port: number;
  /**
   * SIGTERM (as `docker restart` sends: Redis flushes its append-only file), then a new server on the
   * same folder; `{ losingData: true }`: on an emptied folder, as a Redis without persistence (or a
   * new volume) comes back, with nothing in it.
   */
  restart(options?: { losingData?: boolean }): Promise<void>;
  /** The server goes away (SIGTERM) and stays away until `comeBack`: clients meet a refused port. */
  goAway(): Promise<void>;
  /** A new server on the same port, on its folder (or, `losingData`, an emptied one); resolves once it accepts connections. */
  comeBack(options?: { losingData?: boolean }): Promise<void>;
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
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    server = child;
    // Ready once it has loaded its append-only file and says so.
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) =>
        reject(new Error(`redis-server exited with ${code} before it was ready: ${seen.slice(-500)}`)),
      );
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
  const comeBack = async (options?: { losingData?: boolean }) => {
    if (server && server.exitCode === null && server.signalCode === null)
      throw new Error('comeBack: the server is still up');
    // What it flushed on its way out is what a persistent Redis loads again: gone, nothing is.
    if (options?.losingData)
      for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
    await start();
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
    async restart(options) {
      await stopServer();
      await comeBack(options);
    },
    goAway: stopServer,
    comeBack,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', onExit);
      await stopServer();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
