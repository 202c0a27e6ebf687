// bench/first-reply: how long a new agent takes to answer its first chat, as its owner sees it. The
// whole platform as `npm start` runs it, the real OpenClaw image, and a model server that answers at
// once (bench/chat/model-server.ts) as the AI gateway's only provider. Each run provisions an agent
// (`POST /api/agents/provision` through the edge), waits for `running` (its row, read every 100 ms),
// then sends `POST /api/chat` until the agent answers (each attempt with a deadline), and deletes
// the agent. Three ways in one invocation, each on a platform of its own (bench/support/agent-platform.ts:
// its own database, mailbox and model server, all gone when the mode is done): cold (no warm pool: the
// container is created and its gateway boots after the POST), warm-on-claim (RUNTIME_WARM_POOL=solo=1,
// RUNTIME_WARM_BOOT=on-claim: a waiting container is claimed and its gateway boots then) and
// warm-booted (RUNTIME_WARM_BOOT=booted: the claimed gateway booted and ran its priming turn ahead
// and hot-reloads the agent's config). Each warm run first waits until the pool is refilled (booted:
// ready and primed, as a pool filled long before would be). Phases come from the gateway's own log:
// from the container's start (cold, on-claim) or the POST (booted) to each mark.
// Reported: provision → running, running → first answer, provision → first answer, p50/p99.
// Usage: npm run bench:first-reply -- [--runs 5] [--only cold,warm-on-claim,warm-booted]
import { loadavg } from 'node:os';
import { parseArgs, stripVTControlCharacters } from 'node:util';
import type Docker from 'dockerode';
import { probeAgent } from '@agentyard/agent-gateway';
import { AGENT_PORT, LABELS } from '@agentyard/runtime';
import { type AgentBench, percentile, startAgentBench } from '../support/agent-platform.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, only: { type: 'string', default: '' } },
});
const MODES = { cold: '', 'warm-on-claim': 'on-claim', 'warm-booted': 'booted' } as const;
type Mode = keyof typeof MODES;
const runs = Number(values.runs);
const TURN_DEADLINE_MS = 300_000;
const RUN_DEADLINE_MS = 600_000;
/** Longest a refilled warm container may take to be waiting (and, when booted ahead, ready). */
const REFILL_DEADLINE_MS = 900_000;
/** Longest a ready warm gateway is given to end its priming turn before the run claims it anyway. */
const PRIMING_WAIT_MS = 180_000;

/**
 * Marks in the gateway's own log (OpenClaw 2026.9.6, timestamped by OpenClaw itself): a boot's, and
 * a claimed warm gateway's hot reload. Each phase is the first matching line after the previous one.
 */
const MARKS: [string, RegExp][] = [
  ['loading configuration', /\[gateway\] loading configuration/],
  ['starting HTTP server', /\[gateway\] starting HTTP server/],
  ['http server listening', /\[gateway\] http server listening/],
  ['ready', /\[gateway\] ready$/],
  ['config change detected', /\[reload\] config change detected/],
  ['config hot reload applied', /\[reload\] config hot reload applied/],
  ['first turn ended', /\[agent\] run \S+ ended/],
];
/** The end of a primed warm gateway's first turn (the platform's `warm-up`, whose model call is refused). */
const PRIMED = /\[agent\] run \S+ ended|embedded run .*(error|fail)|FailoverError/i;

const s = (x: number) => (x / 1000).toFixed(2);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Run {
  running: number;
  answered: number;
  attempts: number;
  phases: Map<string, number>;
}

/** The container's log lines with the time OpenClaw wrote on each (colours stripped). */
async function gatewayLog(docker: Docker, containerId: string): Promise<{ at: number; text: string }[]> {
  const raw = (await docker.getContainer(containerId).logs({ stdout: true, stderr: true })) as unknown as Buffer;
  // Multiplexed frames (8-byte headers) without a TTY: strip them, keep the text.
  const text: string[] = [];
  for (let offset = 0; offset + 8 <= raw.length; offset += 8 + raw.readUInt32BE(offset + 4))
    text.push(raw.subarray(offset + 8, offset + 8 + raw.readUInt32BE(offset + 4)).toString('utf8'));
  const lines: { at: number; text: string }[] = [];
  for (const line of stripVTControlCharacters(text.join('')).split('\n')) {
    const match = /^(\d{4}-\d\d-\d\dT\S+) (.*)$/.exec(line);
    if (match) lines.push({ at: Date.parse(match[1]!), text: match[2]! });
  }
  return lines;
}

/** Milliseconds from `since` (the container's start, or the claim) to each mark, the first matching line after the previous mark. */
async function phasesOf(docker: Docker, containerId: string, since: number): Promise<Map<string, number>> {
  const lines = (await gatewayLog(docker, containerId)).filter((l) => l.at >= since - 1000);
  if (process.env.BENCH_VERBOSE)
    for (const line of lines) console.log(`    +${s(line.at - since)} ${line.text.slice(0, 160)}`);
  const phases = new Map<string, number>();
  let from = 0;
  for (const [name, pattern] of MARKS) {
    const index = lines.findIndex((l, i) => i >= from && pattern.test(l.text));
    if (index < 0) continue;
    phases.set(name, lines[index]!.at - since);
    from = index + 1;
  }
  return phases;
}

/**
 * Until `count` warm containers of this run wait unclaimed and, when their gateways boot ahead, they
 * answer /readyz and their priming turn has ended (as in a pool filled long before; at most
 * PRIMING_WAIT_MS after ready: said when it had not). Returns whether they were primed.
 */
async function warmPoolReady({ docker, prefix }: AgentBench, count: number): Promise<boolean> {
  const by = Date.now() + REFILL_DEADLINE_MS;
  let readySince = 0;
  while (Date.now() < by) {
    const waiting = await docker.listContainers({
      filters: { label: [`${LABELS.instance}=${prefix}`, LABELS.warm], status: ['running'] },
    });
    const unclaimed = waiting.filter((c) => c.Names?.[0]?.includes('agentyard-warm-'));
    if (unclaimed.length >= count) {
      if (!unclaimed.every((c) => c.Labels?.[LABELS.warmBooted] === 'true')) return false; // gateways that boot after their claim: nothing more to wait for
      const state = await Promise.all(
        unclaimed.map(async (c) => {
          const port = c.Ports?.find((p) => p.PrivatePort === AGENT_PORT && p.PublicPort)?.PublicPort;
          if (!port || (await probeAgent(`http://127.0.0.1:${port}`, 5000)).ready !== true) return 'booting';
          return (await gatewayLog(docker, c.Id)).some((l) => PRIMED.test(l.text)) ? 'primed' : 'ready';
        }),
      );
      if (state.every((x) => x === 'primed')) return true;
      if (state.every((x) => x !== 'booting')) {
        readySince ||= Date.now();
        if (Date.now() - readySince > PRIMING_WAIT_MS) {
          console.log(
            `  warm gateway ready but its priming turn not over after ${PRIMING_WAIT_MS / 1000} s: claimed as it is`,
          );
          return false;
        }
      }
    }
    await pause(1000);
  }
  throw new Error(`no ${count} warm containers ready within ${REFILL_DEADLINE_MS / 1000} s`);
}

async function measure(mode: Mode): Promise<Run[]> {
  const warm = MODES[mode];
  const bench = await startAgentBench({
    name: 'first-reply',
    portRange: '30700-30799',
    env: {
      AGENT_READY_TIMEOUT_MS: '240000',
      RUNTIME_WARM_POOL: warm ? 'solo=1' : '',
      RUNTIME_WARM_BOOT: warm || 'booted',
    },
  });
  const { docker, system } = bench;
  const results: Run[] = [];
  try {
    const { web } = await bench.subscribedUser('solo');
    for (let run = 0; run < runs; run++) {
      if (warm) await warmPoolReady(bench, 1);
      const postedAt = Date.now();
      const started = performance.now();
      const id = await bench.provision(web, `bench-${run}`);
      try {
        for (let status = 'provisioning'; status !== 'running'; ) {
          if (performance.now() - started > RUN_DEADLINE_MS)
            throw new Error(`the agent did not run within ${RUN_DEADLINE_MS / 1000} s (${status})`);
          await pause(100);
          status = (await system.selectFrom('agents').select('status').where('id', '=', id).executeTakeFirstOrThrow())
            .status;
          if (status === 'error') throw new Error('the agent ended in error');
        }
        const running = performance.now() - started;
        let attempts = 0;
        for (;;) {
          if (performance.now() - started > RUN_DEADLINE_MS)
            throw new Error(`no answer within ${RUN_DEADLINE_MS / 1000} s`);
          attempts++;
          const res = await web
            .request(
              'POST',
              '/api/chat',
              { agentId: id, message: 'hello', sessionKey: `bench-${run}` },
              { timeoutMs: TURN_DEADLINE_MS },
            )
            .catch(() => null);
          const body = res ? ((await res.json().catch(() => ({}))) as { message?: { content?: string } }) : {};
          if (res?.status === 200 && body.message?.content === 'benchmark answer') break;
          if (process.env.BENCH_VERBOSE) console.log(`  chat answered ${res?.status ?? 'nothing'}`);
          await pause(250);
        }
        const answered = performance.now() - started;
        const { container_id: containerId } = await system
          .selectFrom('agents')
          .select('container_id')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        // A booted warm gateway's phases count from the claim (the POST); any other's from its container's start.
        const inspected = await docker.getContainer(containerId!).inspect();
        const phases = await phasesOf(
          docker,
          containerId!,
          inspected.Config.Labels?.[LABELS.warmBooted] === 'true' ? postedAt : Date.parse(inspected.State.StartedAt),
        );
        results.push({ running, answered, attempts, phases });
        console.log(
          `${mode} run ${run + 1}: running ${s(running)} s, first answer ${s(answered)} s (${attempts} attempt${attempts === 1 ? '' : 's'}); gateway log: ${[...phases].map(([k, v]) => `${k} +${s(v)}`).join(', ')}`,
        );
      } finally {
        // Deleted as its owner does, so its memory, state disk and plan slot are free for the next run.
        const deleted = await web
          .request('DELETE', `/api/agents/${id}`, undefined, { timeoutMs: 120_000 })
          .catch(() => null);
        if (deleted?.status !== 200) console.log(`delete answered ${deleted?.status ?? 'nothing'}`);
      }
    }
  } finally {
    await bench.close();
  }
  return results;
}

const load = loadavg()[0]!;
const modes = (Object.keys(MODES) as Mode[]).filter((m) => !values.only || values.only.split(',').includes(m));
const all = new Map<string, Run[]>();
for (const mode of modes) all.set(mode, await measure(mode));
console.log(
  `\nfirst reply of a new agent (real OpenClaw image), ${runs} runs each, load average ${load.toFixed(1)} at the start (seconds, p50 / p99):`,
);
for (const [mode, results] of all) {
  const line = (label: string, xs: number[]) =>
    console.log(`  ${mode.padEnd(13)} ${label.padEnd(40)} ${s(percentile(xs, 50))} / ${s(percentile(xs, 99))}`);
  line(
    'provision → running',
    results.map((r) => r.running),
  );
  line(
    'running → first answer',
    results.map((r) => r.answered - r.running),
  );
  line(
    'provision → first answer',
    results.map((r) => r.answered),
  );
  for (const [name] of MARKS) {
    const xs = results.map((r) => r.phases.get(name)).filter((x): x is number => x !== undefined);
    if (xs.length) line(`${mode === 'warm-booted' ? 'claim' : 'container start'} → ${name}`, xs);
  }
}
