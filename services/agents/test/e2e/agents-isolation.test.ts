import t, { type Test } from 'tap';
import { execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { repoRoot } from '@agentyard/config';
import { allowAgentListener, createDockerDriver, resourcesFor, type RuntimeDriver } from '@agentyard/runtime';
import { loadAgentsConfig } from '../../src/config.ts';

// Tenant agents isolated for real: the process driver is refused in production, and agent
// containers (real ones, on the machine's engine) are hardened and confined, seen both in what the
// engine reports and in what a process inside the container can do.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';
const MB = 1024 ** 2;
const run = promisify(execFile);
const noEngine = process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine';
// Real containers and two service processes starting on a shared machine.
t.setTimeout(600_000);

t.test('production refuses the process driver', async (t) => {
  const production = { ...process.env, NODE_ENV: 'production', RUNTIME_DRIVER: 'process' };
  t.throws(() => loadAgentsConfig(production), /RUNTIME_DRIVER=process is refused in production/);
  t.doesNotThrow(() => loadAgentsConfig({ ...production, RUNTIME_DRIVER: 'docker' }), 'containers are fine');
  t.doesNotThrow(
    () => loadAgentsConfig({ ...production, NODE_ENV: 'development' }),
    'development may run agents as processes',
  );

  await Promise.all(
    ['main.ts', 'worker.ts'].map(async (entry) => {
      const child = spawn(process.execPath, [...process.execArgv, join(repoRoot, 'services/agents/src', entry)], {
        env: production,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      for (const stream of [child.stdout, child.stderr])
        stream.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
        });
      // A process that started serving instead is stopped once the check has failed.
      const serving = setTimeout(() => child.kill('SIGKILL'), 180_000);
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      clearTimeout(serving);
      t.equal(code, 1, `${entry} stops at start`);
      t.match(
        output,
        /RUNTIME_DRIVER=process is refused in production: agents would run as the platform's own OS user/,
        `${entry} says why`,
      );
    }),
  );
});

/** Runs `cmd` in a container through the engine's exec API: its exit code and output. */
async function execOut(
  docker: Docker,
  containerId: string,
  cmd: string[],
): Promise<{ code: number | null; out: string }> {
  const exec = await docker.getContainer(containerId).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (chunk: Buffer) => chunks.push(chunk));
  docker.modem.demuxStream(stream, sink, sink);
  await new Promise((resolve) => stream.on('end', resolve));
  return { code: (await exec.inspect()).ExitCode, out: Buffer.concat(chunks).toString('utf8') };
}

/** A docker driver of this test's own (label, config directory), on the engine and network `npm test` prepared. */
async function ownDriver(t: Test): Promise<{ driver: RuntimeDriver; configDir: string; docker: Docker }> {
  const configDir = await mkdtemp(join(tmpdir(), 'agentyard-isolation-'));
  const instance = `isolation-${randomBytes(4).toString('hex')}`;
  const driver = createDockerDriver({
    dockerHost: process.env.DOCKER_HOST!,
    instance,
    defaultImage: MINIMAL,
    publishHost: '127.0.0.1',
    pidsLimit: 256,
    stopTimeoutSeconds: 5,
    timeoutMs: 30_000,
    networkMode: process.env.RUNTIME_NETWORK_MODE ?? '',
    configDir,
  });
  const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
  t.teardown(async () => {
    await driver.warm?.drain();
    for (const c of await driver.list()) {
      await driver.remove(c.id);
      await driver.removeState(c.agentId);
    }
    await rm(configDir, { recursive: true, force: true });
  });
  return { driver, configDir, docker };
}

t.test('agent containers are hardened', { skip: noEngine }, async (t) => {
  const { driver, configDir, docker } = await ownDriver(t);
  // An image whose USER is root, as a caller may name one.
  const base = await docker.createContainer({ Image: MINIMAL });
  const rootImage = `localhost/agentyard-isolation-root:${randomBytes(4).toString('hex')}`;
  await base.commit({ repo: rootImage.split(':')[0], tag: rootImage.split(':')[1], changes: 'USER root' });
  await base.remove();
  t.teardown(() =>
    docker
      .getImage(rootImage)
      .remove({ force: true })
      .catch(() => undefined),
  );
  t.equal((await docker.getImage(rootImage).inspect()).Config.User, 'root', 'the image says root');

  const agentId = randomUUID();
  const diskBytes = 64 * MB;
  const resources = { ...resourcesFor('solo'), diskBytes };
  const id = await driver.create({
    agentId,
    userId: randomUUID(),
    image: rootImage,
    hostPort: 0,
    config: '{}',
    resources,
  });
  await driver.start(id);
  const info = await docker.getContainer(id).inspect();
  t.equal(info.Config.User, '1000:1000', 'an explicit non-root user');
  t.equal(info.HostConfig.ReadonlyRootfs, true, 'read-only root filesystem');
  t.equal(info.HostConfig.MemorySwap, info.HostConfig.Memory, 'swap equal to the memory limit: none beyond it');
  t.equal(info.HostConfig.Memory, resources.memoryBytes);
  const tmpfs = info.HostConfig.Tmpfs ?? {};
  for (const dir of ['/tmp', '/home/node/.cache', '/var/tmp', '/run'])
    t.match(tmpfs[dir], /size=\d+/, `${dir}: a bounded tmpfs`);
  // Docker reports max-size in its LogConfig; Podman 4.3 keeps it as its own log size (its compat inspect shows none).
  const logCap =
    (await driver.version()).engine === 'podman'
      ? (await run('podman', ['container', 'inspect', '--format', '{{.HostConfig.LogConfig.Size}}', id])).stdout.trim()
      : info.HostConfig.LogConfig?.Config?.['max-size'];
  t.match(logCap, /^10(MB|m)$/, 'container log capped at 10 MB');

  const exec = (cmd: string) => execOut(docker, id, ['sh', '-c', cmd]);
  t.equal((await exec('id -u')).out.trim(), '1000', 'runs as uid 1000 though the image says root');
  const rootWrite = await exec('echo x > /etc/agentyard-probe');
  t.not(rootWrite.code, 0);
  t.match(rootWrite.out, /Read-only file system/, 'writing to the image fails with EROFS');
  t.equal(
    (await exec('echo x > /tmp/probe && echo x > /home/node/.cache/probe')).code,
    0,
    'temp directories are writable',
  );
  t.equal((await exec('echo tea > /home/node/.openclaw/MEMORY.md')).code, 0, 'the state directory is writable');

  // The state directory is a filesystem of its own, as large as the plan says.
  const df = (await exec('df -k /home/node/.openclaw | tail -1')).out.trim().split(/\s+/);
  const sizeKb = Number(df[1]);
  const bounded = sizeKb > 0 && sizeKb * 1024 <= diskBytes;
  t.ok(bounded, "the state is on a filesystem no larger than the agent's disk", { df });
  if (!bounded) return; // without a bound, filling it would fill the host

  const hostFreeBefore = (await run('df', ['-k', '--output=avail', configDir])).stdout.split('\n')[1]!.trim();
  const fill = await exec('dd if=/dev/zero of=/home/node/.openclaw/fill bs=1M 2>&1; echo "exit $?"');
  t.match(fill.out, /No space left on device/, 'writing without end stops at the bound (ENOSPC)');
  t.match(fill.out, /exit 1/);
  const hostFreeAfter = (await run('df', ['-k', '--output=avail', configDir])).stdout.split('\n')[1]!.trim();
  const binds = info.HostConfig.Binds ?? [];
  const hostState = binds.map((b) => b.split(':')).find(([, inside]) => inside === '/home/node/.openclaw')![0]!;
  const image = await stat(`${hostState}.ext4`);
  const mountPoint = await readlink(hostState);
  t.ok(image.blocks * 512 <= diskBytes, 'the host holds no more of it than the bound', {
    allocatedBytes: image.blocks * 512,
    diskBytes,
  });
  t.comment(
    `host free before ${hostFreeBefore} KiB, after ${hostFreeAfter} KiB; the agent's disk image holds ${Math.round((image.blocks * 512) / MB)} MiB of a ${diskBytes / MB} MiB bound`,
  );
  t.equal(
    (await exec('rm /home/node/.openclaw/fill && echo more > /home/node/.openclaw/MEMORY.md')).code,
    0,
    'freed, it is writable again',
  );

  // Its disk goes with its state.
  await driver.remove(id);
  await driver.removeState(agentId);
  t.notOk(
    await stat(`${hostState}.ext4`).then(
      () => true,
      () => false,
    ),
    'no disk image left',
  );
  t.notOk((await readFile('/proc/self/mountinfo', 'utf8')).includes(` ${mountPoint} `), 'nothing left mounted');
  t.notOk(
    await stat(hostState).then(
      () => true,
      () => false,
    ),
    'no state path left',
  );
});

t.test('a warm container claimed by an agent keeps a bounded state disk', { skip: noEngine }, async (t) => {
  const { driver, docker } = await ownDriver(t);
  const resources = { ...resourcesFor('solo'), diskBytes: 32 * MB };
  await driver.warm!.topUp([{ image: MINIMAL, resources, count: 1 }]);
  const agentId = randomUUID();
  const claimed = await driver.warm!.claim({ agentId, userId: randomUUID(), image: MINIMAL, config: '{}', resources });
  t.ok(claimed, 'a waiting container was claimed');
  await claimed!.named();
  const df = (await execOut(docker, claimed!.containerId, ['sh', '-c', 'df -k /home/node/.openclaw | tail -1'])).out
    .trim()
    .split(/\s+/);
  t.ok(
    Number(df[1]) > 0 && Number(df[1]) * 1024 <= 32 * MB,
    'its state is on the bounded filesystem made for it while it waited',
    { df },
  );
});

/** The host's own non-loopback addresses (v4 and v6). */
const hostAddresses = () =>
  Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && !a.address.startsWith('fe80'))
    .map((a) => a!.address);

t.test(
  "agents reach the edge's agent listener and no private, link-local or host address",
  {
    skip:
      noEngine ||
      (!process.env.DOCKER_HOST?.includes('podman') &&
        "egress rules are installed for Podman's user-mode networks only"),
  },
  async (t) => {
    const { driver, docker } = await ownDriver(t);
    // Addresses in each range agents must not reach, made real on this host (its loopback) with a listener behind them.
    const targets = ['169.254.169.254', '10.254.254.254', '172.31.254.254', '192.168.254.254', '100.127.254.254'];
    const added: string[] = [];
    t.teardown(async () => {
      for (const address of added)
        await run('ip', ['addr', 'del', `${address}/32`, 'dev', 'lo']).catch(() => undefined);
    });
    for (const address of targets) {
      const present = (await run('ip', ['-4', '-o', 'addr', 'show', 'dev', 'lo'])).stdout.includes(` ${address}/`);
      if (!present) {
        await run('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo']);
        added.push(address);
      }
    }
    const listen = async (): Promise<Server> => {
      const server = createServer((socket) => socket.end('hello\n'));
      await new Promise<void>((resolve) => server.listen(0, '::', resolve));
      t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
      return server;
    };
    const portOf = (server: Server) => (server.address() as { port: number }).port;
    const other = portOf(await listen());
    const edge = portOf(await listen());
    const hostV4 = hostAddresses().find((a) => a.includes('.'))!;
    // The edge's agent listener, allowed as a test platform allows its own, for this test only.
    t.teardown(await allowAgentListener(hostV4, edge, 600));

    const blocked = [...targets, ...hostAddresses(), '10.0.2.2'].map((host) => ({ host, port: other }));
    // Each is reachable from the host itself: what the agent does not reach is kept from it.
    for (const { host, port } of blocked.filter((b) => b.host !== '10.0.2.2')) {
      t.equal(await probeFromHost(host, port), 'open', `${host}:${port} answers on the host`);
    }

    const agentId = randomUUID();
    const id = await driver.create({
      agentId,
      userId: randomUUID(),
      image: MINIMAL,
      hostPort: 0,
      config: '{}',
      resources: { ...resourcesFor('solo'), diskBytes: 32 * MB },
    });
    await driver.start(id);
    const probes = [...blocked, { host: hostV4, port: edge }];
    const script = `const net = require('node:net');
const probe = ({ host, port }) => new Promise((resolve) => {
  const socket = net.connect({ host, port, timeout: 5000 });
  socket.on('data', () => { resolve('open'); socket.destroy(); });
  socket.on('error', (error) => resolve(error.code));
  socket.on('timeout', () => { resolve('timeout'); socket.destroy(); });
});
Promise.all(${JSON.stringify(probes)}.map(probe)).then((results) => console.log(JSON.stringify(results)));`;
    const { out } = await execOut(docker, id, ['node', '-e', script]);
    const results = JSON.parse(out.trim().split('\n').at(-1)!) as string[];
    probes.forEach((p, i) => {
      if (p.port === edge) t.equal(results[i], 'open', `the edge's agent listener ${p.host}:${p.port} is reachable`);
      else t.not(results[i], 'open', `${p.host}:${p.port} is not reachable from the agent (${results[i]})`);
    });
    t.comment(
      'the public internet cannot be reached from this machine at all: that agents still reach it is not tested here',
    );
  },
);

function probeFromHost(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.on('data', () => {
      resolve('open');
      socket.destroy();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.on('timeout', () => {
      resolve('timeout');
      socket.destroy();
    });
  });
}
