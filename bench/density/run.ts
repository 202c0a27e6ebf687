// bench/density: how many agents a host holds with hibernation against always-on, under a mixed
// load. `--agents` agents of the real OpenClaw image (one label subscriber), the whole platform as
// `npm start` runs it with short idle times (paused after 2 s, stopped after 20 s) and the model
// server of bench/chat (answers at once). First each agent answers a chat and its container's memory
// is read while it runs: the always-on cost. Then, for `--seconds`, `--active` of them get a chat
// every 5 s while the others idle: every 2 s the memory of all the agents' containers together is
// read from the engine (a stopped container holds none), with how many run, are paused and stopped.
// What fits in this host's memory is computed from those measured costs: always-on, the running
// cost of one agent into the memory left beside the platform; with hibernation, the steady state's
// memory per agent of the mixed load (active ones running, idle ones stopped). The state disk each
// agent keeps in every state is read too (`du` of its mounts, through the link to its disk), the bound that hibernation leaves.
// Usage: npm run bench:density -- [--agents 6 --active 2 --seconds 120]
import { execFile } from 'node:child_process';
import { loadavg, totalmem } from 'node:os';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { percentile, startAgentBench } from '../support/agent-platform.ts';

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '6' },
    active: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '120' },
  },
});
const count = Number(values.agents);
const activeCount = Math.min(Number(values.active), count);
const seconds = Number(values.seconds);
const TURN_DEADLINE_MS = 300_000;
/** What the platform's own processes, PostgreSQL, Redis and the engine are left of the host's memory. */
const PLATFORM_RESERVE_BYTES = 2 * 1024 ** 3;
const GiB = (bytes: number) => (bytes / 1024 ** 3).toFixed(2);
const MiB = (bytes: number) => (bytes / 1024 ** 2).toFixed(0);

const bench = await startAgentBench({
  name: 'density',
  portRange: '39500-39999',
  env: {
    RATE_LIMITS: 'web-chat=1000000,web-gateway=1000000,backend-agent-chat=1000000,backend-agent-models=1000000',
    HIBERNATE_PAUSE_AFTER: '2s',
    HIBERNATE_STOP_AFTER: '20s',
    HIBERNATE_SWEEP_EVERY_MS: '500',
    HIBERNATE_ACTIVITY_EVERY_MS: '100',
  },
});
const { docker, system } = bench;

try {
  const { web } = await bench.subscribedUser('label');
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await bench.provision(web, `dense-${i}`));
  const rows = () =>
    system
      .selectFrom('agents')
      .select(['id', 'status', 'hibernation', 'container_id'])
      .where('id', 'in', ids)
      .execute();
  const bootStart = Date.now();
  for (;;) {
    const now = await rows();
    if (now.some((r) => r.status === 'error')) throw new Error('an agent ended in error');
    if (now.every((r) => r.status === 'running' || r.status === 'suspended')) break;
    if (Date.now() - bootStart > 1_200_000)
      throw new Error(`not every agent came up within 20 min: ${now.map((r) => r.status).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  console.log(`${count} agents up ${((Date.now() - bootStart) / 1000).toFixed(0)} s after provisioning`);

  let turn = 0;
  const chat = async (id: string): Promise<number> => {
    const started = performance.now();
    const res = await web.request(
      'POST',
      '/api/chat',
      { agentId: id, message: 'hello', sessionKey: `density-${++turn}` },
      { timeoutMs: TURN_DEADLINE_MS },
    );
    const body = (await res.json()) as { message?: { content?: string } };
    if (res.status !== 200 || body.message?.content !== 'benchmark answer')
      throw new Error(`turn answered ${res.status} ${JSON.stringify(body)}`);
    return performance.now() - started;
  };
  const containerOf = async (id: string) =>
    (await system.selectFrom('agents').select('container_id').where('id', '=', id).executeTakeFirstOrThrow())
      .container_id!;
  const memoryOf = async (containerId: string) => {
    const info = await docker.getContainer(containerId).inspect();
    if (!info.State.Running) return 0; // stopped: the engine holds no memory for it (a paused one is Running and holds all)
    const stats = (await docker.getContainer(containerId).stats({ stream: false })) as {
      memory_stats?: { usage?: number };
    };
    return stats.memory_stats?.usage ?? 0;
  };

  // Always-on: each agent's memory right after it answered (awake, its gateway warmed by a turn).
  const running: number[] = [];
  for (const id of ids) {
    await chat(id);
    running.push(await memoryOf(await containerOf(id)));
  }
  const diskOf = async (containerId: string) => {
    const mounts =
      ((await docker.getContainer(containerId).inspect()) as { Mounts?: { Source?: string }[] }).Mounts ?? [];
    let bytes = 0;
    for (const { Source } of mounts)
      if (Source)
        bytes +=
          Number((await promisify(execFile)('du', ['-sb', `${Source}/`], { timeout: 30_000 })).stdout.split('\t')[0]) ||
          0;
    return bytes;
  };
  const disks = await Promise.all(ids.map(async (id) => diskOf(await containerOf(id))));

  // The mixed load: a few agents busy, the rest left idle to hibernate.
  const load = loadavg()[0]!;
  const active = ids.slice(0, activeCount);
  const turns: number[] = [];
  const until = Date.now() + seconds * 1000;
  const busy = active.map(async (id) => {
    while (Date.now() < until) {
      turns.push(await chat(id));
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  });
  const samples: { at: number; bytes: number; running: number; paused: number; stopped: number }[] = [];
  while (Date.now() < until) {
    const now = await rows();
    const bytes = (await Promise.all(now.map((r) => (r.container_id ? memoryOf(r.container_id) : 0)))).reduce(
      (a, b) => a + b,
      0,
    );
    const paused = now.filter((r) => r.hibernation === 'paused').length;
    const stopped = now.filter((r) => r.hibernation === 'stopped').length;
    samples.push({ at: Date.now(), bytes, running: now.length - paused - stopped, paused, stopped });
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  await Promise.all(busy);

  // The steady state: the second half of the window, once the idle ones had time to stop.
  const steady = samples.slice(Math.floor(samples.length / 2));
  const steadyBytes = percentile(
    steady.map((s) => s.bytes),
    50,
  );
  const last = samples.at(-1)!;
  const runningMedian = percentile(running, 50);
  const budget = totalmem() - PLATFORM_RESERVE_BYTES;
  const perAgentMixed = steadyBytes / count;
  const alwaysOn = Math.floor(budget / runningMedian);
  const hibernated = Math.floor(budget / perAgentMixed);
  console.log(
    `\n${count} agents (real OpenClaw), ${activeCount} busy (a chat every 5 s), ${count - activeCount} idle, ${seconds} s, load average ${load.toFixed(1)} at the start:`,
  );
  console.log(
    `  running agent: memory p50 ${MiB(runningMedian)} MiB (min ${MiB(Math.min(...running))}, max ${MiB(Math.max(...running))})`,
  );
  console.log(
    `  steady state (second half): all agents together p50 ${MiB(steadyBytes)} MiB; at the end ${last.running} running, ${last.paused} paused, ${last.stopped} stopped`,
  );
  console.log(
    `  busy agents' chats: p50 ${percentile(turns, 50).toFixed(0)} / p99 ${percentile(turns, 99).toFixed(0)} ms (n=${turns.length})`,
  );
  console.log(`  state disk per agent: p50 ${MiB(percentile(disks, 50))} MiB (kept in every state)`);
  console.log(
    `host memory ${GiB(totalmem())} GiB, ${GiB(PLATFORM_RESERVE_BYTES)} GiB left to the platform: always-on ${alwaysOn} agents; with hibernation at this mix (${((activeCount / count) * 100).toFixed(0)}% busy) ${hibernated} agents (${(hibernated / alwaysOn).toFixed(1)}x), computed from the measured memory per agent (${MiB(perAgentMixed)} MiB)`,
  );
} finally {
  await bench.close();
}
