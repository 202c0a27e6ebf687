// `npm run bench:agent-boot -- --rounds 5`: a real OpenClaw agent container, as the platform runs
// it (read-only root, /tmp in memory, uid 1000, its state mounted), from `podman run` to the
// gateway's `/readyz` ready: the wait and the container's CPU, with the image's baked code cache
// (NODE_COMPILE_CACHE=/app/compile-cache, infra/agent-image/build.sh) against without it
// (NODE_COMPILE_CACHE emptied: OpenClaw then compiles into the container's empty /tmp), rounds alternating.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { median } from '../rounds.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const podman = (...args: string[]) => execFileSync('podman', args, { encoding: 'utf8' }).trim();

/** CPU seconds a container's cgroup has used: cgroup v1's cpuacct (these machines) or v2's cpu.stat. */
function containerCpuSeconds(cgroup: string): number {
  try {
    return Number(readFileSync(`/sys/fs/cgroup/cpuacct${cgroup}/cpuacct.usage`, 'utf8')) / 1e9;
  } catch {
    const usage = /^usage_usec (\d+)$/m.exec(readFileSync(`/sys/fs/cgroup${cgroup}/cpu.stat`, 'utf8'))?.[1];
    return Number(usage) / 1e6;
  }
}

/** One boot: seconds to ready, and the CPU seconds the container used by then. */
async function boot(cached: boolean): Promise<{ waitS: number; cpuS: number }> {
  const home = mkdtempSync(join(tmpdir(), 'agentyard-boot-'));
  mkdirSync(join(home, '.openclaw'));
  const token = randomBytes(16).toString('hex');
  writeFileSync(
    join(home, '.openclaw', 'openclaw.json'),
    JSON.stringify({ gateway: { mode: 'local', bind: 'lan', port: 18789, auth: { mode: 'token', token } } }),
  );
  for (const path of [home, join(home, '.openclaw'), join(home, '.openclaw', 'openclaw.json')])
    chownSync(path, 1000, 1000);
  const began = performance.now();
  const id = podman(
    'run',
    '-d',
    '--init',
    '--read-only',
    '--user',
    '1000:1000',
    '--tmpfs',
    '/tmp:rw,mode=1777',
    '--tmpfs',
    '/home/node/.cache:rw,mode=1777',
    '-e',
    'HOME=/home/node',
    ...(cached ? [] : ['-e', 'NODE_COMPILE_CACHE=']),
    '-v',
    `${home}:/home/node`,
    '-p',
    '127.0.0.1::18789',
    DEFAULT_AGENT_IMAGE,
  );
  try {
    const port = podman('port', id, '18789').split('\n')[0]!.split(':').at(-1);
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) })
        .then((r) => r.json() as Promise<{ ready?: boolean }>)
        .catch(() => ({ ready: false }));
      if (ready.ready) break;
      if (performance.now() - began > 600_000) throw new Error('not ready within 600 s');
      await new Promise((resolve) => setTimeout(resolve, 200)); // a poll: the gateway announces readiness nowhere else
    }
    const waitS = (performance.now() - began) / 1000;
    const cpuS = containerCpuSeconds(podman('inspect', '--format', '{{.State.CgroupPath}}', id));
    return { waitS, cpuS };
  } finally {
    podman('rm', '-f', '-t', '2', id);
    rmSync(home, { recursive: true, force: true });
  }
}

const taken: Record<'cached' | 'uncached', { waitS: number; cpuS: number }[]> = { cached: [], uncached: [] };
for (let round = 0; round < rounds; round++)
  for (const kind of ['uncached', 'cached'] as const) taken[kind].push(await boot(kind === 'cached'));
const p50 = (kind: 'cached' | 'uncached', key: 'waitS' | 'cpuS') => median(taken[kind].map((r) => r[key]));
for (const kind of ['uncached', 'cached'] as const)
  console.log(`${kind}: ready p50 ${p50(kind, 'waitS').toFixed(2)} s, CPU p50 ${p50(kind, 'cpuS').toFixed(2)} s`);
console.log(
  `cached ÷ uncached: ready ${(p50('cached', 'waitS') / p50('uncached', 'waitS')).toFixed(2)}×, CPU ${(p50('cached', 'cpuS') / p50('uncached', 'cpuS')).toFixed(2)}×`,
);
