// bench/hibernate: what hibernation costs a person and what it saves the host. One agent of the real
// OpenClaw image (the minimal gateway has no chat), the whole platform as `npm start` runs it with
// short idle times (paused after 300 ms, stopped after 5 s), the model server of bench/chat (answers
// at once). Three kinds of turn through the edge (POST /api/chat), each timed from the request to
// its answer:
//   awake:      a chat right after the previous answer (the agent runs): the baseline
//   from pause: a chat once the agent is paused by the engine (resume, then the turn)
//   from stop:  a chat once the agent is stopped (start, its gateway's boot, then the turn)
// and what each state still holds: the container's memory (engine stats) running, paused and
// stopped (the state disk is kept in every state).
// With `--image minimal` the agent is the minimal gateway (no chat): the request is a read of its
// /healthz through the edge's runtime proxy (backend surface), the same wake path; light enough to
// run beside other work.
// Usage: npm run bench:hibernate -- [--pauses 30 --stops 5 --image openclaw|minimal]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { percentile, startAgentBench } from '../support/agent-platform.ts';

const { values } = parseArgs({
  options: {
    pauses: { type: 'string', default: '30' },
    stops: { type: 'string', default: '5' },
    image: { type: 'string', default: 'openclaw' },
  },
});
const minimal = values.image === 'minimal';
const pauses = Number(values.pauses);
const stops = Number(values.stops);
const TURN_DEADLINE_MS = 300_000;

const bench = await startAgentBench({
  name: 'hib',
  portRange: '39000-39499',
  env: {
    AGENT_IMAGE: minimal ? 'localhost/agentyard-gateway-minimal:1' : DEFAULT_AGENT_IMAGE,
    RATE_LIMITS:
      'web-chat=1000000,web-gateway=1000000,backend-api=1000000,backend-agent-chat=1000000,backend-agent-models=1000000',
    HIBERNATE_PAUSE_AFTER: '300ms',
    HIBERNATE_STOP_AFTER: '5s',
    HIBERNATE_SWEEP_EVERY_MS: '200',
    HIBERNATE_ACTIVITY_EVERY_MS: '100',
  },
});
const { env, platform, docker, system } = bench;
const ms = (x: number) => x.toFixed(0);
const MiB = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);

try {
  const { web, userId } = await bench.subscribedUser();
  // Not waited for here: with these idle times it is paused moments after it runs.
  const id = await bench.provision(web);

  const row = () =>
    system
      .selectFrom('agents')
      .select(['status', 'hibernation', 'container_id'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  /** Polls the agent's row (no rate limit, no activity) until `done`. */
  const until = async (done: (r: Awaited<ReturnType<typeof row>>) => boolean, what: string, deadlineMs = 540_000) => {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const r = await row();
      if (done(r)) return r;
      if (r.status === 'error') throw new Error('the agent ended in error');
      if (Date.now() > deadline) throw new Error(`${what}: not within ${deadlineMs} ms (${r.status}/${r.hibernation})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  let turnNumber = 0;
  const chat = async (): Promise<number> => {
    const started = performance.now();
    if (minimal) {
      const res = await fetch(`${platform.backendUrl}/api/runtime/proxy/${id}/healthz`, {
        signal: AbortSignal.timeout(TURN_DEADLINE_MS),
        headers: { authorization: `Bearer ${env.INTERNAL_API_KEY}`, 'x-user-id': userId },
      });
      const body = (await res.json()) as { ok?: boolean };
      if (res.status !== 200 || body.ok !== true)
        throw new Error(`request answered ${res.status} ${JSON.stringify(body)}`);
      return performance.now() - started;
    }
    const res = await web.request(
      'POST',
      '/api/chat',
      { agentId: id, message: 'hello', sessionKey: `bench-${++turnNumber}` },
      { timeoutMs: TURN_DEADLINE_MS },
    );
    const body = (await res.json()) as { message?: { content?: string } };
    if (res.status !== 200 || body.message?.content !== 'benchmark answer')
      throw new Error(`turn answered ${res.status} ${JSON.stringify(body)}`);
    return performance.now() - started;
  };
  const memoryOf = async (containerId: string) => {
    const stats = (await docker.getContainer(containerId).stats({ stream: false })) as {
      memory_stats?: { usage?: number };
    };
    return stats.memory_stats?.usage ?? Number.NaN;
  };
  const bootStart = Date.now();
  await until((r) => r.status === 'running' || r.status === 'suspended', 'the agent running');
  console.log(`agent up ${((Date.now() - bootStart) / 1000).toFixed(0)} s after provisioning`);
  for (let i = 0; i < 3; i++) await chat(); // warm-up: connections, the gateway's first turns

  const took = { awake: [] as number[], pause: [] as number[], stop: [] as number[] };
  const memory = { running: [] as number[], paused: [] as number[] };
  const load = loadavg()[0]!;
  for (let i = 0; i < pauses; i++) {
    const asleep = await until((r) => r.status === 'suspended' && r.hibernation === 'paused', 'paused', 60_000);
    memory.paused.push(await memoryOf(asleep.container_id!));
    took.pause.push(await chat());
    // The baseline, next to it in time: the agent still runs (its idle time starts over with each answer).
    took.awake.push(await chat());
    memory.running.push(await memoryOf(asleep.container_id!));
  }
  for (let i = 0; i < stops; i++) {
    const asleep = await until((r) => r.status === 'suspended' && r.hibernation === 'stopped', 'stopped', 120_000);
    // The row says so before the gateway has exited: timed from the engine's stop, as a later request meets it.
    const stopDeadline = Date.now() + 60_000;
    let state = '';
    while (
      !['exited', 'stopped'].includes(
        (state = (await docker.getContainer(asleep.container_id!).inspect()).State.Status),
      )
    ) {
      if (Date.now() > stopDeadline) throw new Error(`a stopped agent's container is ${state}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    took.stop.push(await chat());
  }

  const line = (name: string, xs: number[]) =>
    `  ${name.padEnd(22)} p50 ${ms(percentile(xs, 50))} / p99 ${ms(percentile(xs, 99))} ms (n=${xs.length})`;
  console.log(
    `\nresume → first answered ${minimal ? 'request (minimal gateway, /healthz through the runtime proxy)' : 'chat (real OpenClaw, instant model server)'} through the edge, load average ${load.toFixed(1)} at the start:`,
  );
  console.log(line('awake (baseline)', took.awake));
  console.log(line('from pause', took.pause));
  console.log(line('from stop', took.stop));
  const a50 = percentile(took.awake, 50);
  console.log(
    `  a pause adds p50 ${ms(percentile(took.pause, 50) - a50)} ms (${(percentile(took.pause, 50) / a50).toFixed(2)}x); a stop adds p50 ${ms(percentile(took.stop, 50) - a50)} ms (${(percentile(took.stop, 50) / a50).toFixed(2)}x)`,
  );
  console.log(
    `memory held (engine stats, medians): running ${MiB(percentile(memory.running, 50))} MiB, paused ${MiB(percentile(memory.paused, 50))} MiB (no CPU), stopped 0 MiB (its state disk is kept in every state)`,
  );
} finally {
  await bench.close();
}
