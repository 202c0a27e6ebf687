// bench/edge: an authenticated GET /api/auth/session through the edge vs the same request straight
// to the auth service (with the identity header the edge would sign), in one run, on loopback.
// Usage: npm run bench:edge [-- --seconds 20 --rate 1000 --connections 16]
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { signIdentity } from '@agentyard/identity';
import { dropDatabase } from '@agentyard/db/admin';
import { startPlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, rate: { type: 'string', default: '1000' }, connections: { type: 'string', default: '16' } } });
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const connections = Number(values.connections);

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const secret = randomBytes(32).toString('base64url');
const platform = await startPlatform(['auth'], {
  ...urls, NODE_ENV: 'production', LOG_LEVEL: 'warn', IDENTITY_SECRET: secret, IDENTITY_TTL_SECONDS: '300',
  INTERNAL_API_KEY: randomBytes(32).toString('base64url'), ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  SESSION_SECRET: randomBytes(32).toString('base64url'), QUEUE_PREFIX: `bench-${randomUUID()}`,
});

try {
  const json = { 'content-type': 'application/json' };
  const email = `bench-${randomUUID()}@example.test`;
  await fetch(`${platform.webUrl}/api/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'benchmark password' }) });
  const login = await fetch(`${platform.webUrl}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'benchmark password' }) });
  const { user } = await login.json() as { user: { id: string } };
  const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
  const authUrl = `http://127.0.0.1:${platform.env.AUTH_PORT}`;
  const identity = signIdentity({ surface: 'web', auth: 'session', userId: user.id, email, admin: false, sessionId: null, requestId: 'bench-direct' }, secret, 300);

  const targets = {
    direct: { url: `${authUrl}/api/auth/session`, headers: { 'x-agentyard-identity': identity } },
    edge: { url: `${platform.webUrl}/api/auth/session`, headers: { cookie } },
  };
  for (const target of Object.values(targets)) {
    const check = await (await fetch(target.url, { headers: target.headers })).json() as { user: { id: string } | null };
    if (check.user?.id !== user.id) throw new Error(`${target.url} did not answer the signed-in user`);
  }

  const run = (target: { url: string; headers: Record<string, string> }, overallRate?: number, duration = seconds) =>
    autocannon({ url: target.url, headers: target.headers, connections, duration, ...(overallRate ? { overallRate } : {}) });
  const row = (name: string, r: autocannon.Result) =>
    `| ${name} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} |`;

  await run(targets.edge, undefined, 3);
  await run(targets.direct, undefined, 3);
  const lines = ['| run | req/s | p50 ms | p99 ms | errors |', '|---|---|---|---|---|'];
  // Alternate the two paths so machine noise falls on both.
  const fixed = { direct: [] as autocannon.Result[], edge: [] as autocannon.Result[] };
  for (let round = 0; round < 2; round++) {
    for (const name of ['direct', 'edge'] as const) {
      const result = await run(targets[name], rate);
      fixed[name].push(result);
      lines.push(row(`${name} @ ${rate} req/s, round ${round + 1}`, result));
    }
  }
  const maxDirect = await run(targets.direct);
  const maxEdge = await run(targets.edge);
  lines.push(row('direct, max throughput', maxDirect), row('edge, max throughput', maxEdge));
  const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
  const added = (key: 'p50' | 'p99') => median(fixed.edge.map((r) => r.latency[key])) - median(fixed.direct.map((r) => r.latency[key]));
  console.log(lines.join('\n'));
  console.log(`\nedge adds at ${rate} req/s: p50 ${added('p50').toFixed(2)} ms, p99 ${added('p99').toFixed(2)} ms (medians over rounds); ` +
    `max throughput edge ${maxEdge.requests.average.toFixed(0)} req/s vs direct ${maxDirect.requests.average.toFixed(0)} req/s (${(maxEdge.requests.average / maxDirect.requests.average).toFixed(2)}x)`);
} finally {
  await platform.stop();
  await dropDatabase(ADMIN_URL, database);
}
