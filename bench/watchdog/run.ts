// bench/watchdog: how long an agent is away after `kill -9`. One agent of the real OpenClaw image,
// the whole platform as `npm start` runs it, and a model server that answers at once
// (bench/chat/model-server.ts) as the AI gateway's only provider. Each round sends SIGKILL to the
// agent container's own process (as `kill -9` on the host does), then asks `POST /api/chat` through
// the edge every 250 ms (each attempt with a deadline) until the agent answers again. The watchdog
// counts exits for its backoff and crash loop; every kill here is measured as a first exit, so the
// bench clears the agent's event history before each (otherwise the third kill is a crash loop).
// Reported: kill → answering again, p50/p99, and its parts (kill → restarted by the watchdog).
// Usage: npm run bench:watchdog -- [--kills 10]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ms, percentile, startAgentBench } from '../support/agent-platform.ts';

const { values } = parseArgs({ options: { kills: { type: 'string', default: '10' } } });
const kills = Number(values.kills);
const TURN_DEADLINE_MS = 120_000;
/** Longest an agent may take to answer again after a kill before the bench gives up. */
const RECOVERY_DEADLINE_MS = 300_000;

const bench = await startAgentBench({ name: 'watchdog', portRange: '30600-30699' });
const { docker, system } = bench;

try {
  // A user with a session cookie and a solo subscription, and one running agent.
  const { web } = await bench.subscribedUser();
  const { id, runningAfterMs } = await bench.runningAgent(web);
  console.log(`agent running ${(runningAfterMs / 1000).toFixed(0)} s after provisioning`);

  /** One chat turn through the edge: true when the agent answered it. */
  let turn = 0;
  const answers = async () => {
    const res = await web
      .request(
        'POST',
        '/api/chat',
        { agentId: id, message: 'hello', sessionKey: `bench-watchdog-${++turn}` },
        { timeoutMs: TURN_DEADLINE_MS },
      )
      .catch(() => null);
    if (!res) return false;
    if (res.status !== 200 && process.env.BENCH_VERBOSE) console.log(`chat answered ${res.status}`);
    const body = (await res.json().catch(() => ({}))) as { message?: { content?: string } };
    return res.status === 200 && body.message?.content === 'benchmark answer';
  };
  // Its first turns are slow (the gateway warms up after it reports ready): answered once before any kill.
  const firstBy = performance.now() + RECOVERY_DEADLINE_MS;
  while (!(await answers())) {
    if (performance.now() > firstBy) throw new Error('the agent does not answer before any kill');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const load = loadavg()[0]!;
  const away: number[] = [];
  const restarted: number[] = [];
  for (let kill = 0; kill < kills; kill++) {
    await system.deleteFrom('agent_events').where('agent_id', '=', id).execute();
    const { container_id: containerId } = await system
      .selectFrom('agents')
      .select('container_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const pid = (await docker.getContainer(containerId!).inspect()).State.Pid;
    const killedAt = Date.now();
    const started = performance.now();
    process.kill(pid, 'SIGKILL');
    let back = false;
    while (!back) {
      if (performance.now() - started > RECOVERY_DEADLINE_MS)
        throw new Error(`kill ${kill + 1}: the agent did not answer within ${RECOVERY_DEADLINE_MS / 1000} s`);
      back = await answers();
      if (!back) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    away.push(performance.now() - started);
    const event = await system
      .selectFrom('agent_events')
      .select('at')
      .where('agent_id', '=', id)
      .where('kind', '=', 'restarted')
      .orderBy('at', 'desc')
      .executeTakeFirst();
    if (event) restarted.push(event.at.getTime() - killedAt);
    console.log(
      `kill ${kill + 1}: answering again after ${ms(away.at(-1)!)} ms (restarted by the watchdog after ${event ? event.at.getTime() - killedAt : '?'} ms)`,
    );
  }
  console.log(`\n${kills} kills of a real OpenClaw agent, load average ${load.toFixed(1)} at the start:`);
  console.log(
    `  kill -9 → answering a chat again   p50 ${ms(percentile(away, 50))} / p99 ${ms(percentile(away, 99))} ms`,
  );
  if (restarted.length)
    console.log(
      `  kill -9 → restarted (watchdog)     p50 ${ms(percentile(restarted, 50))} / p99 ${ms(percentile(restarted, 99))} ms (${restarted.length} of ${kills})`,
    );
} finally {
  await bench.close();
}
