// bench/edge: an authenticated GET /api/auth/session through the edge vs the same request straight
// to the auth service (with the identity header the edge would sign), in one run, on loopback.
// autocannon runs in a process of its own (load.ts); each run also reports the CPU time each process
// spent per request (edge, auth, the run database's PostgreSQL backends, the load generator), which
// shows what bounds throughput on a small machine.
// With --metrics, a second edge and auth run with METRICS=off beside the first, and the rounds
// alternate between the two edges too: what the per-request metrics cost, within the run's noise.
// Usage: npm run bench:edge [-- --seconds 20 --rate 1000 --connections 16 --metrics]
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { signIdentity } from '@agentyard/identity';
import { dropDatabase } from '@agentyard/db/admin';
import { startPlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
import { cpuMicros, median, metricsOnOff } from '../rounds.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    rate: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '16' },
    metrics: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const connections = Number(values.connections);

interface Load {
  requestsPerSecond: number;
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  cpuMicros: number;
}
interface Run extends Load {
  cpu: Record<'edge' | 'auth' | 'postgres' | 'load', number>;
}

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const secret = randomBytes(32).toString('base64url');
const platformEnv = {
  ...urls,
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  IDENTITY_SECRET: secret,
  IDENTITY_TTL_SECONDS: '300',
  INTERNAL_API_KEY: randomBytes(32).toString('base64url'),
  ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  SESSION_SECRET: randomBytes(32).toString('base64url'),
  QUEUE_PREFIX: `bench-${randomUUID()}`,
};
const platform = await startPlatform(['auth'], platformEnv);
const unmeasured = values.metrics ? await startPlatform(['auth'], { ...platformEnv, METRICS: 'off' }) : undefined;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();

try {
  const json = { 'content-type': 'application/json' };
  const email = `bench-${randomUUID()}@example.test`;
  await fetch(`${platform.webUrl}/api/register`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email, password: 'benchmark password' }),
  });
  const login = await fetch(`${platform.webUrl}/api/auth/login`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email, password: 'benchmark password' }),
  });
  const { user } = (await login.json()) as { user: { id: string } };
  const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
  const authUrl = `http://127.0.0.1:${platform.env.AUTH_PORT}`;
  const identity = signIdentity(
    {
      surface: 'web',
      auth: 'session',
      userId: user.id,
      email,
      admin: false,
      sessionId: null,
      keyId: null,
      requestId: 'bench-direct',
    },
    secret,
    300,
  );

  const targets: Record<string, { url: string; headers: Record<string, string>; pids?: Record<string, number> }> = {
    direct: { url: `${authUrl}/api/auth/session`, headers: { 'x-agentyard-identity': identity } },
    edge: { url: `${platform.webUrl}/api/auth/session`, headers: { cookie } },
    // Its CPU is read from its own processes.
    ...(unmeasured
      ? {
          'edge, metrics off': {
            url: `${unmeasured.webUrl}/api/auth/session`,
            headers: { cookie },
            pids: unmeasured.pids,
          },
        }
      : {}),
  };
  for (const target of Object.values(targets)) {
    const check = (await (await fetch(target.url, { headers: target.headers })).json()) as {
      user: { id: string } | null;
    };
    if (check.user?.id !== user.id) throw new Error(`${target.url} did not answer the signed-in user`);
  }

  const postgresPids = async () =>
    (await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database])).rows.map(
      (r) => r.pid,
    );
  const cpuNow = async (pids = platform.pids) => ({
    edge: cpuMicros(pids.edge!),
    auth: cpuMicros(pids.auth!),
    postgres: (await postgresPids()).reduce((sum, pid) => sum + cpuMicros(pid), 0),
  });
  const run = async (
    target: { url: string; headers: Record<string, string>; pids?: Record<string, number> },
    overallRate?: number,
    duration = seconds,
  ): Promise<Run> => {
    const before = await cpuNow(target.pids);
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(import.meta.dirname, 'load.ts'),
      JSON.stringify({
        url: target.url,
        headers: target.headers,
        connections,
        duration,
        ...(overallRate ? { overallRate } : {}),
      }),
    ]);
    const after = await cpuNow(target.pids);
    const load = JSON.parse(stdout) as Load;
    const perRequest = (micros: number) => Math.round(micros / Math.max(load.requests, 1));
    return {
      ...load,
      cpu: {
        edge: perRequest(after.edge - before.edge),
        auth: perRequest(after.auth - before.auth),
        postgres: perRequest(after.postgres - before.postgres),
        load: perRequest(load.cpuMicros),
      },
    };
  };
  const row = (name: string, r: Run) =>
    `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.cpu.edge} | ${r.cpu.auth} | ${r.cpu.postgres} | ${r.cpu.load} |`;

  await run(targets.edge!, undefined, 3);
  await run(targets.direct!, undefined, 3);
  const lines = [
    '| run | req/s | p50 ms | p99 ms | errors | CPU µs/req: edge | auth | postgres | load generator |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  // Alternate the two paths so machine noise falls on both; three rounds so the median drops one noisy run.
  const fixed: Record<string, Run[]> = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
  for (let round = 0; round < 3; round++) {
    for (const name of Object.keys(targets)) {
      const result = await run(targets[name]!, rate);
      fixed[name]!.push(result);
      lines.push(row(`${name} @ ${rate} req/s, round ${round + 1}`, result));
    }
  }
  const maxDirect = await run(targets.direct!);
  const maxEdge = await run(targets.edge!);
  lines.push(row('direct, max throughput', maxDirect), row('edge, max throughput', maxEdge));
  const maxUnmeasured = unmeasured ? await run(targets['edge, metrics off']!) : undefined;
  if (maxUnmeasured) lines.push(row('edge, metrics off, max throughput', maxUnmeasured));
  // How many of the edge's callers it looked up in the database rather than answering from memory.
  const metricsText = await (await fetch(`${platform.opsUrls.edge}/metrics`)).text();
  const lookups = metricsText
    .split('\n')
    .find((line) => line.startsWith('edge_identity_database_lookups_total{kind="session"}'));
  const edgeRequests = [...fixed.edge!, maxEdge].reduce((sum, r) => sum + r.requests, 0);
  const added = (key: 'p50' | 'p99', over = 'direct', path = 'edge') =>
    median(fixed[path]!.map((r) => r[key])) - median(fixed[over]!.map((r) => r[key]));
  console.log(lines.join('\n'));
  console.log(
    `\nedge adds at ${rate} req/s: p50 ${added('p50').toFixed(2)} ms, p99 ${added('p99').toFixed(2)} ms (medians over rounds; autocannon latencies are whole ms); ` +
      `max throughput edge ${maxEdge.requestsPerSecond.toFixed(0)} req/s vs direct ${maxDirect.requestsPerSecond.toFixed(0)} req/s (${(maxEdge.requestsPerSecond / maxDirect.requestsPerSecond).toFixed(2)}x)`,
  );
  const median3 = (path: string, key: 'postgres' | 'edge') => median(fixed[path]!.map((r) => r.cpu[key]));
  console.log(
    `postgres CPU per request at ${rate} req/s: edge ${median3('edge', 'postgres')} µs vs direct ${median3('direct', 'postgres')} µs (${(median3('edge', 'postgres') / median3('direct', 'postgres')).toFixed(2)}x); ` +
      `session lookups in the database by the edge: ${lookups ? Number(lookups.split(' ').pop()) : 0} for ${edgeRequests} measured requests`,
  );
  if (maxUnmeasured) {
    const cpu = (name: string) => median(fixed[name]!.map((r) => r.cpu.edge + r.cpu.auth));
    console.log(
      `metrics on vs off at ${rate} req/s: ${metricsOnOff(fixed.edge!, fixed['edge, metrics off']!)}; ` +
        `CPU edge+auth ${cpu('edge')} vs ${cpu('edge, metrics off')} µs/req; max throughput ${maxEdge.requestsPerSecond.toFixed(0)} vs ${maxUnmeasured.requestsPerSecond.toFixed(0)} req/s`,
    );
  }
} finally {
  await admin.end();
  await platform.stop();
  await unmeasured?.stop();
  await dropDatabase(ADMIN_URL, database);
}
