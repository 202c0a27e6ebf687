import { execFile, execFileSync } from 'node:child_process';
import { chownSync, globSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectionUrl, createDatabase, ensureRoles, migrateToLatest, ROLES } from '@agentyard/db/admin';

const run = promisify(execFile);

/** A TCP port nothing listens on now (the kernel's pick). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface PrivatePostgres {
  /** Superuser URL of the cluster's `postgres` database. */
  adminUrl: string;
  port: number;
  /** Stops the server (`fast`: sessions ended, as `docker stop` does) and starts it again on the same data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A PostgreSQL cluster of this test's own (initdb into a temporary folder, its own port and socket
 * folder), for tests that restart the server: the machine's shared one serves every other test
 * file. PostgreSQL refuses to run as root, so the cluster runs as `postgres` when we are root.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = globSync('/usr/lib/postgresql/*/bin/pg_ctl')
    .sort()
    .at(-1)
    ?.replace(/\/pg_ctl$/, '');
  if (!bin) throw new Error('startPrivatePostgres: no /usr/lib/postgresql/*/bin/pg_ctl (install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const as = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
  const data = join(dir, 'data');
  await as(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const pgCtl = (...args: string[]) =>
    as(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-o', options, ...args]);
  // -w: pg_ctl returns once the server accepts connections (or fails with the log's reason).
  const start = () => pgCtl('-w', '-t', '60', 'start');
  const stopServer = () => pgCtl('-w', '-t', '60', '-m', 'fast', 'stop');
  await start();
  let stopped = false;
  // pg_ctl detaches the server: a test process that ends without its teardown stops it on the way out.
  const onExit = () => {
    if (stopped) return;
    try {
      const args = [join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'];
      if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'ignore' });
      else execFileSync(args[0]!, args.slice(1), { stdio: 'ignore' });
    } catch {
      /* already stopped */
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart() {
      await stopServer();
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', onExit);
      await stopServer().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The project's roles, a database and every migration on a private cluster; the three roles' URLs. */
export async function migratedDatabase(adminUrl: string, name: string) {
  await ensureRoles(adminUrl);
  await createDatabase(adminUrl, name);
  const url = (role: keyof typeof ROLES) => connectionUrl(adminUrl, { user: ROLES[role], database: name });
  const urls = { DATABASE_OWNER_URL: url('owner'), DATABASE_URL: url('app'), DATABASE_SYSTEM_URL: url('system') };
  await migrateToLatest(urls.DATABASE_OWNER_URL);
  return urls;
}
