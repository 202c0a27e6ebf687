// bench/chat: what the platform adds to a chat round trip with a running agent. One agent of the real
// OpenClaw image (the minimal gateway image has no /v1/chat/completions), the whole platform as
// `npm start` runs it, and a model server that answers at once (model-server.ts, its own process)
// as the AI gateway's only provider. Two paths to the same agent, same run, interleaved turn by turn
// (the order flipping each round), each turn on a session of its own so no transcript grows:
//   edge:   POST /api/chat on the web surface with the session cookie (edge → agents service → gateway)
//   direct: POST /v1/chat/completions on the agent's gateway with its token, as the agents service sends it
// Both turns make the same model call through the platform's AI gateway; the difference is the edge
// and the agents service (identity, the agent's row, the token unsealed, the relay). Sequential
// turns, loopback only, every request with a deadline.
// Usage: npm run bench:chat -- [--rounds 5 --turns 20]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { ms, percentile, startAgentBench } from '../support/agent-platform.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, turns: { type: 'string', default: '20' } },
});
const rounds = Number(values.rounds);
const turns = Number(values.turns);
const TURN_DEADLINE_MS = 120_000;

const bench = await startAgentBench({ name: 'chat', portRange: '39500-39999' });
const { env, system, modelCalls } = bench;

try {
  // A user with a session cookie and a solo subscription, and one running agent.
  const { web } = await bench.subscribedUser();
  const { id, runningAfterMs } = await bench.runningAgent(web);
  console.log(`agent running ${(runningAfterMs / 1000).toFixed(0)} s after provisioning`);
  const row = await system
    .selectFrom('agents')
    .select(['gateway_url', 'gateway_token_sealed'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const gatewayToken = openAgentSecret(
    parseKeyring(env.ENCRYPTION_KEYS!),
    id,
    'gateway-token',
    row.gateway_token_sealed!,
  );

  let turnNumber = 0;
  const paths = {
    async edge(): Promise<number> {
      const started = performance.now();
      const res = await web.request(
        'POST',
        '/api/chat',
        { agentId: id, message: 'hello', sessionKey: `bench-edge-${++turnNumber}` },
        { timeoutMs: TURN_DEADLINE_MS },
      );
      const body = (await res.json()) as { message?: { content?: string } };
      if (res.status !== 200 || body.message?.content !== 'benchmark answer')
        throw new Error(`edge turn answered ${res.status} ${JSON.stringify(body)}`);
      return performance.now() - started;
    },
    async direct(): Promise<number> {
      const started = performance.now();
      const res = await fetch(new URL('/v1/chat/completions', row.gateway_url!), {
        method: 'POST',
        signal: AbortSignal.timeout(TURN_DEADLINE_MS),
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${gatewayToken}`,
          'x-openclaw-session-key': `bench-direct-${++turnNumber}`,
        },
        body: JSON.stringify({
          model: 'openclaw/default',
          stream: false,
          messages: [{ role: 'user', content: 'hello' }],
        }),
      });
      const body = (await res.json()) as { choices?: { message?: { content?: string } }[] };
      if (res.status !== 200 || body.choices?.[0]?.message?.content !== 'benchmark answer')
        throw new Error(`direct turn answered ${res.status} ${JSON.stringify(body)}`);
      return performance.now() - started;
    },
  };

  for (let i = 0; i < 3; i++) {
    await paths.edge();
    await paths.direct();
  } // warm-up: connections, JIT, the gateway's first turns
  const load = loadavg()[0]!;
  const callsBefore = await modelCalls();
  const took = { edge: [] as number[], direct: [] as number[] };
  // Each edge turn minus the direct turn next to it in time: drift of the machine falls on both.
  const paired: number[] = [];
  const roundLines: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const here = { edge: [] as number[], direct: [] as number[] };
    for (let i = 0; i < turns; i++) {
      for (const name of (i + round) % 2 ? (['direct', 'edge'] as const) : (['edge', 'direct'] as const))
        here[name].push(await paths[name]());
      paired.push(here.edge.at(-1)! - here.direct.at(-1)!);
    }
    took.edge.push(...here.edge);
    took.direct.push(...here.direct);
    roundLines.push(
      `| ${round + 1} | ${ms(percentile(here.direct, 50))} | ${ms(percentile(here.edge, 50))} | ${ms(percentile(here.edge, 50) - percentile(here.direct, 50))} |`,
    );
  }
  const calls = (await modelCalls()) - callsBefore;

  console.log('\n| round | direct p50 ms | edge p50 ms | added p50 ms |\n|---|---|---|---|');
  console.log(roundLines.join('\n'));
  const n = took.edge.length;
  const [d50, d99, e50, e99] = [
    percentile(took.direct, 50),
    percentile(took.direct, 99),
    percentile(took.edge, 50),
    percentile(took.edge, 99),
  ];
  console.log(
    `\n${n} turns per path (${rounds} rounds of ${turns}, interleaved), instant model server, load average ${load.toFixed(1)} at the start:`,
  );
  console.log(`  direct to the gateway   p50 ${ms(d50)} / p99 ${ms(d99)} ms`);
  console.log(`  POST /api/chat (edge)   p50 ${ms(e50)} / p99 ${ms(e99)} ms`);
  console.log(
    `  the platform adds       p50 ${ms(e50 - d50)} ms (${(e50 / d50).toFixed(2)}x), p99 ${ms(e99 - d99)} ms (${(e99 / d99).toFixed(2)}x); median of paired differences ${ms(percentile(paired, 50))} ms`,
  );
  console.log(`model calls ${calls} for ${2 * n} turns${calls === 2 * n ? '' : ' — not one per turn'}`);
} finally {
  await bench.close();
}
