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
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { dropDatabase } from '@agentyard/db/admin';
import { createSystemDb } from '@agentyard/db/system';
import { DEFAULT_AGENT_IMAGE, LABELS } from '@agentyard/runtime';
import { startWholePlatform } from '@agentyard/testing';
import { preparePlatformExtras } from '../../scripts/lib/extras.ts';
import { startMailbox } from '../../scripts/lib/mailbox.ts';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
import { runtimeConfigDir } from '../../services/agents/src/domain/agents/runtime-context-system.ts';
import { WebClient } from '../../test/support/journey.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, turns: { type: 'string', default: '20' } } });
const rounds = Number(values.rounds);
const turns = Number(values.turns);
const TURN_DEADLINE_MS = 120_000;

const modelServer = fork(join(import.meta.dirname, 'model-server.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const modelPort = await new Promise<number>((resolve, reject) => {
  modelServer.once('message', (message) => resolve((message as { port: number }).port));
  modelServer.once('exit', (code) => reject(new Error(`the model server exited with ${code}`)));
});
const modelUrl = `http://127.0.0.1:${modelPort}`;
const modelCalls = async () => ((await (await fetch(`${modelUrl}/count`, { signal: AbortSignal.timeout(5000) })).json()) as { answered: number }).answered;

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const prefix = `bench-chat-${randomUUID().slice(0, 8)}`;
const mailbox = await startMailbox({ smtpPort: 0, webPort: 0 });
const env: Record<string, string> = {
  ...urls,
  NODE_ENV: 'test',
  LOG_LEVEL: 'warn',
  QUEUE_PREFIX: prefix,
  RUNTIME_INSTANCE: prefix,
  IDENTITY_SECRET: randomBytes(32).toString('base64url'),
  SESSION_SECRET: randomBytes(32).toString('base64url'),
  INTERNAL_API_KEY: randomBytes(32).toString('base64url'),
  ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
  SMTP_URL: mailbox.smtpUrl,
  BILLING_PROVIDER: 'local',
  AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
  AGENT_PORT_RANGE: '39500-39999',
  AGENT_READY_TIMEOUT_MS: '420000',
  OPENAI_BASE_URL: `${modelUrl}/v1`,
  OPENAI_API_KEY: 'bench-provider-key',
  // Every turn is counted by the web chat's and the agent's model-call limits (60 and 120 a minute).
  RATE_LIMITS: 'web-chat=1000000,backend-agent-chat=1000000',
};
Object.assign(env, await preparePlatformExtras({ ...process.env, ...env }), { RUNTIME_INSTANCE: prefix });
if (env.RUNTIME_DRIVER !== 'docker' || !env.EDGE_AGENT_HOST) throw new Error("bench/chat needs a container engine and a host address for the edge's agent listener");
const docker = new Docker({ socketPath: env.DOCKER_HOST!.replace('unix://', '') });
const platform = await startWholePlatform(env, { listenTimeoutMs: 180_000 });
const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2 });

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (x: number) => x.toFixed(1);
let agentId: string | undefined;

try {
  // A user with a session cookie and a solo subscription, and one running agent.
  const web = new WebClient(platform.webUrl, env.PUBLIC_BASE_URL!);
  const email = `${prefix}@bench.invalid`;
  const registered = await web.request('POST', '/api/register', { email, password: 'a bench password', name: 'bench' });
  if (registered.status !== 201) throw new Error(`register answered ${registered.status}`);
  const { id: userId } = (await registered.json()) as { id: string };
  if ((await web.request('POST', '/api/auth/login', { email, password: 'a bench password' })).status !== 200) throw new Error('login failed');
  await system
    .insertInto('subscriptions')
    .values({ id: `sub_${prefix}`, user_id: userId, status: 'active', plan: 'solo', updated_at: new Date() })
    .execute();
  const provisioned = await web.request('POST', '/api/agents/provision', { name: 'bench' });
  if (provisioned.status !== 201) throw new Error(`provision answered ${provisioned.status}: ${await provisioned.text()}`);
  const id = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
  agentId = id;
  const bootStart = Date.now();
  for (let status = 'provisioning'; status !== 'running'; ) {
    if (Date.now() - bootStart > 540_000) throw new Error(`the agent did not run within 540 s (${status})`);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the status has no event on this surface; once a second is within its rate limit
    const row = await system.selectFrom('agents').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    status = row.status;
    if (status === 'error') throw new Error('the agent ended in error');
  }
  console.log(`agent running ${((Date.now() - bootStart) / 1000).toFixed(0)} s after provisioning`);
  const row = await system.selectFrom('agents').select(['gateway_url', 'gateway_token_sealed']).where('id', '=', id).executeTakeFirstOrThrow();
  const gatewayToken = openAgentSecret(parseKeyring(env.ENCRYPTION_KEYS!), id, 'gateway-token', row.gateway_token_sealed!);

  let turnNumber = 0;
  const paths = {
    async edge(): Promise<number> {
      const started = performance.now();
      const res = await web.request('POST', '/api/chat', { agentId: id, message: 'hello', sessionKey: `bench-edge-${++turnNumber}` }, { timeoutMs: TURN_DEADLINE_MS });
      const body = (await res.json()) as { message?: { content?: string } };
      if (res.status !== 200 || body.message?.content !== 'benchmark answer') throw new Error(`edge turn answered ${res.status} ${JSON.stringify(body)}`);
      return performance.now() - started;
    },
    async direct(): Promise<number> {
      const started = performance.now();
      const res = await fetch(new URL('/v1/chat/completions', row.gateway_url!), {
        method: 'POST',
        signal: AbortSignal.timeout(TURN_DEADLINE_MS),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gatewayToken}`, 'x-openclaw-session-key': `bench-direct-${++turnNumber}` },
        body: JSON.stringify({ model: 'openclaw/default', stream: false, messages: [{ role: 'user', content: 'hello' }] }),
      });
      const body = (await res.json()) as { choices?: { message?: { content?: string } }[] };
      if (res.status !== 200 || body.choices?.[0]?.message?.content !== 'benchmark answer') throw new Error(`direct turn answered ${res.status} ${JSON.stringify(body)}`);
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
      for (const name of (i + round) % 2 ? (['direct', 'edge'] as const) : (['edge', 'direct'] as const)) here[name].push(await paths[name]());
      paired.push(here.edge.at(-1)! - here.direct.at(-1)!);
    }
    took.edge.push(...here.edge);
    took.direct.push(...here.direct);
    roundLines.push(`| ${round + 1} | ${ms(percentile(here.direct, 50))} | ${ms(percentile(here.edge, 50))} | ${ms(percentile(here.edge, 50) - percentile(here.direct, 50))} |`);
  }
  const calls = (await modelCalls()) - callsBefore;

  console.log('\n| round | direct p50 ms | edge p50 ms | added p50 ms |\n|---|---|---|---|');
  console.log(roundLines.join('\n'));
  const n = took.edge.length;
  const [d50, d99, e50, e99] = [percentile(took.direct, 50), percentile(took.direct, 99), percentile(took.edge, 50), percentile(took.edge, 99)];
  console.log(`\n${n} turns per path (${rounds} rounds of ${turns}, interleaved), instant model server, load average ${load.toFixed(1)} at the start:`);
  console.log(`  direct to the gateway   p50 ${ms(d50)} / p99 ${ms(d99)} ms`);
  console.log(`  POST /api/chat (edge)   p50 ${ms(e50)} / p99 ${ms(e99)} ms`);
  console.log(
    `  the platform adds       p50 ${ms(e50 - d50)} ms (${(e50 / d50).toFixed(2)}x), p99 ${ms(e99 - d99)} ms (${(e99 / d99).toFixed(2)}x); median of paired differences ${ms(percentile(paired, 50))} ms`,
  );
  console.log(`model calls ${calls} for ${2 * n} turns${calls === 2 * n ? '' : ' — not one per turn'}`);
} finally {
  // Deleted as an operator does, so the platform releases the agent's state disk and port.
  if (agentId)
    await fetch(`${platform.backendUrl}/api/agents/${agentId}`, { method: 'DELETE', signal: AbortSignal.timeout(60_000), headers: { authorization: `Bearer ${env.INTERNAL_API_KEY}` } }).catch(
      () => undefined,
    );
  await system.destroy();
  await platform.stop();
  for (const c of await docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${prefix}`] } }))
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined);
  await rm(join(runtimeConfigDir({ RUNTIME_CONFIG_DIR: env.RUNTIME_CONFIG_DIR ?? '' }), prefix), { recursive: true, force: true }); // the agent's config and state directories
  await mailbox.close();
  modelServer.kill();
  await dropDatabase(ADMIN_URL, database);
}
