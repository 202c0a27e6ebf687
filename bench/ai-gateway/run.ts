// bench/ai-gateway: POST /api/ai/chat with plan and subscription checks and usage logging on, at a
// fixed rate, against a local OpenAI-compatible provider with a fixed latency. Three targets in one
// run, alternating in rounds so machine noise falls on all of them: straight to the provider, the
// ai service alone (with the identity header the edge would sign), and the full path through the
// edge. Then a soak through the full path with the services' memory before and after (live heap
// after a full GC, and RSS), and a check that every chat served left exactly one usage row.
// The provider (provider.ts) and the load generator (load.ts) each run in a process of their own;
// the load is open loop (latency counted from each request's scheduled send time). CPU time per
// request is reported for the edge and the ai service, and for the provider (a bare node:http server)
// as a yardstick of the machine: machines of one kind differ by 1.5x in it from day to day.
// With --metrics, a second edge and ai service run with METRICS=off beside the first (same provider),
// and the rounds go through that edge too: what the per-request metrics cost, within the run's noise.
// With --peer portkey, Portkey's open-source gateway (@portkey-ai/gateway, a root devDependency for
// this bench only: the side-by-side peer of issue 33) runs as a process of its own against the same
// provider (OpenAI route, `x-portkey-provider: openai` and `x-portkey-custom-host: <provider>/v1`,
// the provider key as the bearer token), and its round is measured like the others: added latency
// against direct in the same round, CPU per request of its process. The work per request is not the
// same: the ai service checks a signed identity, the plan and the subscription, admits against the
// rate limits and writes a usage row (the edge before it also authenticates the caller's key); Portkey
// by default authenticates nobody, checks no plan and writes no usage (no Redis, no cache, no hooks),
// and builds its request log (reading the answer's JSON again) for a log stream nobody listens to.
// Usage: npm run bench:ai-gateway -- [--rate 500 --seconds 20 --rounds 3 --soak-seconds 600 --latency 60 --connections 256 --profile --budgets --metrics --peer portkey]
// (--budgets: spend reserved at admission and settled, SPENDING_ENFORCED=true; without it the gateway runs with it off.)
// (--node-options '...' adds Node flags to the services' processes, for experiments.)
import { execFile, fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile, watch } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { dropDatabase } from '@agentyard/db/admin';
import { createSystemDb } from '@agentyard/db/system';
import { signIdentity } from '@agentyard/identity';
import { startPlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
import { cpuMicros, median, metricsOnOff } from '../rounds.ts';
import { heapReportFile } from './heap-probe.ts';

type Name = 'direct' | 'ai' | 'edge' | 'edge, metrics off' | 'portkey';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    'soak-seconds': { type: 'string', default: '600' },
    latency: { type: 'string', default: '60' },
    connections: { type: 'string', default: '256' },
    profile: { type: 'boolean', default: false },
    'node-options': { type: 'string', default: '' },
    budgets: { type: 'boolean', default: false },
    metrics: { type: 'boolean', default: false },
    peer: { type: 'string' },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const soakSeconds = Number(values['soak-seconds']);
const latencyMs = Number(values.latency);
const connections = Number(values.connections);
if (values.peer !== undefined && values.peer !== 'portkey')
  throw new Error(`--peer ${values.peer}: the only peer is portkey`);

interface Load {
  cpu?: Record<Process, number>;
  sent: number;
  ok: number;
  errors: number;
  firstError: string | null;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}
interface Target {
  url: string;
  headers: Record<string, string>;
  /** The request body when not the one the ai service takes. */
  body?: string;
  /** The processes that serve it when not the measured pair's. */
  pids?: Record<string, number>;
}

const provider = fork(join(import.meta.dirname, 'provider.ts'), [String(latencyMs)], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const providerPort = await new Promise<number>((resolve, reject) => {
  provider.once('message', (message) => resolve((message as { port: number }).port));
  provider.once('exit', (code) => reject(new Error(`provider exited with ${code}`)));
});
const providerUrl = `http://127.0.0.1:${providerPort}`;

/** Resident memory of a process in MB, from /proc (Linux). */
function rssMegabytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no RSS for process ${pid}`);
  return Number(kb) / 1024;
}

/** A service's RSS and its live heap after a full GC in MB, the latter reported by heap-probe.ts. */
async function memoryOf(pid: number): Promise<{ rss: number; live: number }> {
  const rss = rssMegabytes(pid);
  const file = heapReportFile(pid);
  rmSync(file, { force: true });
  const written = watch(dirname(file), { signal: AbortSignal.timeout(10_000) });
  process.kill(pid, 'SIGURG');
  for await (const event of written) if (event.filename === basename(file)) break;
  const { liveBytes } = JSON.parse(await readFile(file, 'utf8')) as { liveBytes: number };
  rmSync(file);
  return { rss, live: liveBytes / 1024 / 1024 };
}
const memoryOfServices = async () => ({
  ai: await memoryOf(platform.pids.ai!),
  edge: await memoryOf(platform.pids.edge!),
});

type Process = 'ai' | 'edge' | 'provider' | 'portkey';

/**
 * Portkey's gateway (its package's bin, build/start-server.js, which takes --port=N), headless (no
 * console UI or log stream routes), kept on loopback and reporting its port by peer-listen.ts.
 */
async function startPortkey() {
  const child = fork(
    join(import.meta.dirname, '../../node_modules/@portkey-ai/gateway/build/start-server.js'),
    ['--port=0', '--headless'],
    {
      env: { PATH: process.env.PATH, NODE_ENV: 'production' },
      execArgv: [
        `--import=${join(import.meta.dirname, 'peer-listen.ts')}`,
        ...values['node-options'].split(' ').filter(Boolean),
      ],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`portkey exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}
const portkey = values.peer === 'portkey' ? await startPortkey() : undefined;

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const apiKey = randomBytes(32).toString('base64url');
const identitySecret = randomBytes(32).toString('base64url');
const profileDir = join(import.meta.dirname, 'profiles');
if (values.profile) mkdirSync(profileDir, { recursive: true });
const platformEnv = {
  ...urls,
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  IDENTITY_SECRET: identitySecret,
  IDENTITY_TTL_SECONDS: '300',
  INTERNAL_API_KEY: apiKey,
  ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  SESSION_SECRET: randomBytes(32).toString('base64url'),
  QUEUE_PREFIX: `bench-${randomUUID()}`,
  RATE_LIMITS: 'backend-api=100000000,backend-ai=100000000',
  // /api/ai/chat is long-lived (it may stream): the edge holds a slot of the caller's per open chat,
  // and the one bench user stands for many callers, so its slots are raised as its rate limits are.
  EDGE_STREAMS_PER_USER: '100000',
  EDGE_STREAMS_MAX: '100000',
  OPENAI_BASE_URL: `${providerUrl}/v1`,
  OPENAI_API_KEY: 'bench-provider-key',
  SPENDING_ENFORCED: String(values.budgets),
  // Production bills through Stripe; nothing here buys, so its key is never used.
  STRIPE_SECRET_KEY: `sk_test_bench_${randomBytes(8).toString('hex')}`,
  NODE_OPTIONS: [
    process.env.NODE_OPTIONS,
    '--expose-gc',
    `--import=${join(import.meta.dirname, 'heap-probe.ts')}`,
    values['node-options'],
    values.profile ? `--cpu-prof --cpu-prof-dir=${profileDir}` : '',
  ]
    .filter(Boolean)
    .join(' '),
};
const platform = await startPlatform(['ai'], platformEnv);
const unmeasured = values.metrics ? await startPlatform(['ai'], { ...platformEnv, METRICS: 'off' }) : undefined;
const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2 });

try {
  const user = await system
    .insertInto('users')
    .values({ email: `bench-${randomUUID()}@example.test`, name: 'bench' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const subscription = `sub_bench_${randomUUID()}`;
  await system
    .insertInto('subscriptions')
    .values({ id: subscription, user_id: user.id, status: 'active', plan: 'solo', updated_at: new Date() })
    .execute();
  const body = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
  const json = { 'content-type': 'application/json' };
  const plan = { 'x-user-plan': 'solo', 'x-stripe-subscription-id': subscription };
  const identity = signIdentity(
    {
      surface: 'backend',
      auth: 'service',
      userId: user.id,
      email: null,
      admin: false,
      sessionId: null,
      keyId: null,
      requestId: 'bench-ai-direct',
    },
    identitySecret,
    24 * 3600,
  );
  const throughEdge = { ...json, ...plan, authorization: `Bearer ${apiKey}`, 'x-user-id': user.id };
  const targets: Partial<Record<Name, Target>> = {
    direct: {
      url: `${providerUrl}/v1/chat/completions`,
      headers: { ...json, authorization: 'Bearer bench-provider-key' },
    },
    ai: {
      url: `http://127.0.0.1:${platform.env.AI_PORT}/api/ai/chat`,
      headers: { ...json, ...plan, 'x-agentyard-identity': identity },
    },
    edge: { url: `${platform.backendUrl}/api/ai/chat`, headers: throughEdge },
    ...(unmeasured
      ? {
          'edge, metrics off': {
            url: `${unmeasured.backendUrl}/api/ai/chat`,
            headers: throughEdge,
            pids: unmeasured.pids,
          },
        }
      : {}),
    ...(portkey
      ? {
          portkey: {
            url: `${portkey.url}/v1/chat/completions`,
            headers: {
              ...json,
              authorization: 'Bearer bench-provider-key',
              'x-portkey-provider': 'openai',
              'x-portkey-custom-host': `${providerUrl}/v1`,
            },
            body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
          },
        }
      : {}),
  };
  /** Chats that leave a usage row: the ai service's, not the provider's or the peer's. */
  const counted = (name: Name) => name !== 'direct' && name !== 'portkey';
  const names = Object.keys(targets) as Name[];
  const atStart = await memoryOfServices();
  let chats = 0;
  for (const name of names.filter((name) => name !== 'direct')) {
    const check = await fetch(targets[name]!.url, {
      method: 'POST',
      headers: targets[name]!.headers,
      body: targets[name]!.body ?? body,
    });
    if (check.status !== 200) throw new Error(`${name} answered ${check.status} ${await check.text()}`);
    if (counted(name)) chats++;
  }

  const cpuNow = (pids = platform.pids) => ({
    ai: cpuMicros(pids.ai!),
    edge: cpuMicros(pids.edge!),
    provider: cpuMicros(provider.pid!),
    portkey: portkey ? cpuMicros(portkey.child.pid!) : 0,
  });
  const run = async (name: Name, duration: number): Promise<Load> => {
    const { url, headers, pids } = targets[name]!;
    const cpuBefore = cpuNow(pids);
    const options = { url, headers, body: targets[name]!.body ?? body, rate, seconds: duration, connections };
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(import.meta.dirname, 'load.ts'), JSON.stringify(options)],
      { maxBuffer: 1 << 20 },
    );
    const load = JSON.parse(stdout) as Load;
    const cpuAfter = cpuNow(pids);
    load.cpu = {
      ai: cpuAfter.ai - cpuBefore.ai,
      edge: cpuAfter.edge - cpuBefore.edge,
      provider: cpuAfter.provider - cpuBefore.provider,
      portkey: cpuAfter.portkey - cpuBefore.portkey,
    };
    if (counted(name)) chats += load.ok;
    return load;
  };
  const ms = (n: number) => n.toFixed(2);
  const row = (name: string, r: Load) =>
    `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.p999)} | ${ms(r.max)} | ${r.errors}${r.firstError ? ` (${r.firstError})` : ''} |`;

  for (const name of names) await run(name, 3); // warm-up: connections, JIT
  const lines = ['| run | req/s | p50 ms | p99 ms | p99.9 ms | max ms | errors |', '|---|---|---|---|---|---|---|'];
  const results = Object.fromEntries(names.map((name) => [name, [] as Load[]])) as Record<Name, Load[]>;
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      const result = await run(name, seconds);
      results[name].push(result);
      lines.push(row(`${name} @ ${rate} req/s, round ${round + 1}`, result));
    }
  }
  const pick = (name: Name, key: 'p50' | 'p99' | 'requestsPerSecond') => median(results[name].map((r) => r[key]));
  const added = (name: 'ai' | 'edge', key: 'p50' | 'p99') => pick(name, key) - pick('direct', key);

  const before = await memoryOfServices();
  let soak: Load | undefined;
  if (soakSeconds > 0) {
    soak = await run('edge', soakSeconds);
    lines.push(row(`edge soak, ${soakSeconds} s`, soak));
  }
  const after = await memoryOfServices();

  // The usage writer flushes on a timer: wait (bounded) until every chat served has its row.
  const countRows = async () =>
    (await system.selectFrom('usage_events').select(system.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
  let rows = await countRows();
  for (const deadline = Date.now() + 30_000; rows < chats && Date.now() < deadline; rows = await countRows())
    await new Promise((resolve) => setTimeout(resolve, 250));

  console.log(lines.join('\n'));
  console.log(
    `\nprovider latency ${latencyMs} ms, ${rate} req/s open loop, medians over ${rounds} rounds of ${seconds} s:`,
  );
  console.log(`  direct          p50 ${ms(pick('direct', 'p50'))} / p99 ${ms(pick('direct', 'p99'))} ms`);
  console.log(
    `  ai service      p50 ${ms(pick('ai', 'p50'))} / p99 ${ms(pick('ai', 'p99'))} ms: adds p50 ${ms(added('ai', 'p50'))}, p99 ${ms(added('ai', 'p99'))} ms`,
  );
  console.log(
    `  edge → ai       p50 ${ms(pick('edge', 'p50'))} / p99 ${ms(pick('edge', 'p99'))} ms: adds p50 ${ms(added('edge', 'p50'))}, p99 ${ms(added('edge', 'p99'))} ms (edge's share p50 ${ms(added('edge', 'p50') - added('ai', 'p50'))}, p99 ${ms(added('edge', 'p99') - added('ai', 'p99'))})`,
  );
  const cpuPerRequest = (name: Name, service: Process) =>
    median(results[name].map((r) => r.cpu![service] / r.sent)).toFixed(0);
  console.log(
    `CPU per request (medians): ai service ${cpuPerRequest('ai', 'ai')} µs alone, ${cpuPerRequest('edge', 'ai')} µs behind the edge; edge ${cpuPerRequest('edge', 'edge')} µs; ` +
      `the provider (a bare node:http server, this machine's yardstick) ${cpuPerRequest('direct', 'provider')} µs`,
  );
  if (unmeasured) {
    const cpu = (name: Name) => median(results[name].map((r) => (r.cpu!.edge + r.cpu!.ai) / r.sent));
    const pair = (name: Name) =>
      `p50 ${ms(pick(name, 'p50'))} / p99 ${ms(pick(name, 'p99'))} ms, ${pick(name, 'requestsPerSecond').toFixed(0)} req/s, CPU edge+ai ${cpu(name).toFixed(0)} µs/req`;
    console.log(`metrics on vs off through edge → ai, medians over ${rounds} rounds:`);
    console.log(`  metrics on      ${pair('edge')}`);
    console.log(`  metrics off     ${pair('edge, metrics off')}`);
    console.log(
      `  on − off        ${metricsOnOff(results.edge, results['edge, metrics off'])}; ` +
        `${Math.round(pick('edge', 'requestsPerSecond') - pick('edge, metrics off', 'requestsPerSecond'))} req/s, CPU ${Math.round(cpu('edge') - cpu('edge, metrics off'))} µs/req`,
    );
  }
  if (portkey) {
    // Added latency per round against direct in that same round, then the median over rounds.
    const addedInRound = (name: Name, key: 'p50' | 'p99') =>
      median(results[name].map((r, round) => r[key] - results.direct[round]![key]));
    const ratio = (ours: number, theirs: number) =>
      theirs > 0 ? `${(ours / theirs).toFixed(2)}×` : `n/a (Portkey adds ${ms(theirs)} ms)`;
    const cpu = (name: Name, processes: Process[]) =>
      median(results[name].map((r) => processes.reduce((sum, p) => sum + r.cpu![p], 0) / r.sent));
    const peer = {
      p50: addedInRound('portkey', 'p50'),
      p99: addedInRound('portkey', 'p99'),
      cpu: cpu('portkey', ['portkey']),
    };
    console.log(
      `side by side with Portkey's gateway (@portkey-ai/gateway, its process alone; no auth, plan or usage), medians over ${rounds} rounds of the added latency against direct in the same round:`,
    );
    console.log(
      `  portkey         p50 ${ms(pick('portkey', 'p50'))} / p99 ${ms(pick('portkey', 'p99'))} ms: adds p50 ${ms(peer.p50)}, p99 ${ms(peer.p99)} ms; CPU ${peer.cpu.toFixed(0)} µs/req`,
    );
    for (const [label, name, processes] of [
      ['ai service', 'ai', ['ai']],
      ['edge → ai', 'edge', ['edge', 'ai']],
    ] as const) {
      const ours = { p50: addedInRound(name, 'p50'), p99: addedInRound(name, 'p99'), cpu: cpu(name, [...processes]) };
      console.log(
        `  ${label.padEnd(15)} adds p50 ${ms(ours.p50)}, p99 ${ms(ours.p99)} ms; CPU ${ours.cpu.toFixed(0)} µs/req (${processes.join('+')}) → ` +
          `ours / Portkey's: added p50 ${ratio(ours.p50, peer.p50)}, added p99 ${ratio(ours.p99, peer.p99)}, CPU ${ratio(ours.cpu, peer.cpu)}`,
      );
    }
    console.log(`  (issue 33's goal: our overhead at most 0.5× the peer's)`);
  }
  const mb = (m: { rss: number; live: number }) => `live heap ${m.live.toFixed(1)} MB (RSS ${m.rss.toFixed(1)})`;
  console.log(`memory at start: ai service ${mb(atStart.ai)}, edge ${mb(atStart.edge)}`);
  if (soak)
    console.log(
      `memory over the ${soakSeconds} s soak: ai service ${mb(before.ai)} → ${mb(after.ai)}, edge ${mb(before.edge)} → ${mb(after.edge)}`,
    );
  else console.log(`memory after the rounds: ai service ${mb(before.ai)}, edge ${mb(before.edge)}`);
  console.log(`usage rows ${rows} for ${chats} chats served${rows === chats ? '' : ' — MISMATCH'}`);
  if (values.profile)
    console.log(
      `CPU profiles of the ai service (pid ${platform.pids.ai}) and the edge (pid ${platform.pids.edge}) go to ${profileDir} when they stop`,
    );
} finally {
  await system.destroy();
  await platform.stop();
  await unmeasured?.stop();
  portkey?.child.kill();
  provider.kill();
  await dropDatabase(ADMIN_URL, database);
}
