// bench/bridge: inbox reads of 100 messages with 1,000,000 messages stored: p50/p99 latency and
// requests per second. The bridge runs as its own process (its real main.ts, production settings),
// autocannon runs here, on loopback, with the identity header the edge would sign. Baseline in the
// same run: an unknown route (404 through the same Fastify stack, identity check included).
// Each target is measured at full throughput (N connections) and at a fixed rate, where latency
// is the service's own rather than queueing behind the connections.
// Usage: npm exec -- node bench/bridge/run.ts [--messages 1000000] [--seconds 10] [--connections 10] [--rate 200]
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { createSystemDb } from '@agentyard/db/system';
import { dropDatabase } from '@agentyard/db/admin';
import { IDENTITY_HEADER, signIdentity } from '@agentyard/identity';
import { startPlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';

const { values } = parseArgs({ options: {
  messages: { type: 'string', default: '1000000' }, seconds: { type: 'string', default: '10' },
  connections: { type: 'string', default: '10' }, rate: { type: 'string', default: '200' },
} });
const messages = Number(values.messages);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rate = Number(values.rate);

ensureDataServices();
const database = `agentyard_bench_bridge_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2 });
try {
  // Spread over the last 24 hours and the three channels, in one statement.
  console.log(`seeding ${messages} messages…`);
  await sql`insert into bridge_messages (sender, channel, priority, content, created_at)
    select 'atlas-main', (array['general','tasks','alerts'])[1 + g % 3], 'normal', 'benchmark message ' || g,
           now() - interval '23 hours' + (g * (interval '23 hours' / ${messages}))
    from generate_series(1, ${messages}) g`.execute(system);
  await sql`analyze bridge_messages`.execute(system);

  const secret = randomBytes(32).toString('base64url');
  const platform = await startPlatform(['bridge'], {
    ...urls, NODE_ENV: 'production', LOG_LEVEL: 'warn', IDENTITY_SECRET: secret, IDENTITY_TTL_SECONDS: '300',
    INTERNAL_API_KEY: randomBytes(32).toString('base64url'), SESSION_SECRET: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`, QUEUE_PREFIX: `bench-${randomUUID()}`,
  });
  try {
    const bridgeUrl = `http://127.0.0.1:${platform.env.BRIDGE_PORT}`;
    const identity = signIdentity({ surface: 'backend', auth: 'service', userId: null, email: null, admin: false, sessionId: null, requestId: 'bench-request' }, secret, 300);
    const headers = { [IDENTITY_HEADER]: identity };
    const inbox = `/api/bridge/inbox?channel=general&limit=100`;
    const check = await (await fetch(`${bridgeUrl}${inbox}`, { headers })).json() as { count: number };
    if (check.count !== 100) throw new Error(`the inbox answered ${check.count} messages, not 100`);

    let reader = 0;
    const targets: Record<string, Partial<autocannon.Options>> = {
      'baseline (unknown route, 404)': { url: `${bridgeUrl}/bench-baseline` },
      'inbox, reader unknown (marks nothing)': { url: `${bridgeUrl}${inbox}` },
      'inbox, a fresh reader per request (marks 100)': {
        url: `${bridgeUrl}${inbox}`,
        requests: [{ setupRequest: ((req: Record<string, unknown>) => ({ ...req, path: `${inbox}&reader=bench-${reader++}` })) as never }],
      },
    };
    const run = (options: Partial<autocannon.Options>, overallRate?: number, duration = seconds) =>
      autocannon({ connections, duration, headers, ...options, ...(overallRate ? { overallRate } : {}) } as autocannon.Options);
    const row = (name: string, r: autocannon.Result) => `| ${name} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} |`;

    for (const options of Object.values(targets)) await run(options, undefined, 2); // warm-up
    const lines = [`| run (${connections} connections) | req/s | p50 ms | p99 ms | non-2xx+errors |`, '|---|---|---|---|---|'];
    const results: Record<string, { max: autocannon.Result; fixed: autocannon.Result }> = {};
    for (const [name, options] of Object.entries(targets)) {
      const max = await run(options);
      const fixed = await run(options, rate);
      results[name] = { max, fixed };
      lines.push(row(`${name}, max throughput`, max), row(`${name}, ${rate} req/s`, fixed));
    }
    console.log(lines.join('\n'));
    const [baseline, ...inboxes] = Object.entries(results);
    for (const [name, r] of inboxes) {
      console.log(`${name}: p99 at ${rate} req/s ${r.fixed.latency.p99} ms (baseline ${baseline![1].fixed.latency.p99} ms); throughput ${(r.max.requests.average / baseline![1].max.requests.average * 100).toFixed(1)}% of baseline`);
    }
  } finally {
    await platform.stop();
  }
} finally {
  await system.destroy();
  await dropDatabase(ADMIN_URL, database);
}
