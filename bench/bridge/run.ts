// bench/bridge: inbox reads of 100 messages with 1,000,000 messages stored: p50/p99 latency and
// requests per second. The bridge runs as its own process (its real main.ts, production settings);
// the load generator (load.ts) runs in a process of its own, on loopback, with the identity header
// the edge would sign.
//
// The measured path is the real one: every marking request returns 100 messages its reader has not
// read yet and marks them read. Readers (`--readers` per channel) each read their channel from the
// oldest message on, so a reader's position moves deeper into the 1,000,000 messages as the run goes;
// the bench checks beforehand that the seeded messages last the whole run.
// Targets: a baseline in the same run (an unknown route: 404 through the same Fastify stack, identity
// check included), the read-only inbox (reader unknown) and the marking inbox. Each is measured at a
// fixed rate, open loop (load.ts), in alternating rounds (medians reported), then once at max
// throughput (closed loop, `--connections` in flight).
// Usage: npm run bench:bridge -- [--messages 1000000] [--seconds 10] [--rate 200] [--rounds 3] [--readers 8] [--connections 8]
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { createSystemDb } from '@agentyard/db/system';
import { dropDatabase } from '@agentyard/db/admin';
import { IDENTITY_HEADER, signIdentity } from '@agentyard/identity';
import { startPlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
    readers: { type: 'string', default: '8' },
    connections: { type: 'string', default: '8' },
  },
});
const messages = Number(values.messages);
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const rounds = Number(values.rounds);
const readersPerChannel = Number(values.readers);
const connections = Number(values.connections);
const CHANNELS = ['general', 'tasks', 'alerts'] as const;
const PAGE = 100;
const WARM_UP_SECONDS = 2;

// Marking reads the run makes at most: warm-up and rounds at the rate, then the max-throughput run
// (bounded generously at 2,000 req/s). Every one of them must find 100 unread messages.
const markingReads = (WARM_UP_SECONDS + rounds * seconds) * rate + seconds * 2000;
const readsPerReader = Math.floor(messages / CHANNELS.length / PAGE);
if (markingReads > readsPerReader * readersPerChannel * CHANNELS.length) {
  throw new Error(
    `${messages} messages give ${readersPerChannel * CHANNELS.length} readers ${readsPerReader} pages each, fewer than the ${markingReads} marking reads this run may make: raise --messages or --readers`,
  );
}

interface Load {
  requests: number;
  answered: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

ensureDataServices();
const database = `agentyard_bench_bridge_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 2 });
try {
  // Spread over the last 23 hours and the three channels, in one statement (through the channel-order trigger).
  console.log(`seeding ${messages} messages…`);
  await sql`insert into bridge_messages (sender, channel, priority, content, created_at)
    select 'atlas-main', (array['general','tasks','alerts'])[1 + g % 3], 'normal', 'benchmark message ' || g,
           now() - interval '23 hours' + (g * (interval '23 hours' / ${messages}))
    from generate_series(1, ${messages}) g`.execute(system);
  // As the database's superuser: the runtime roles own no table, so their VACUUM/ANALYZE is skipped
  // with a mere warning, and without statistics the planner picks plans no running system would.
  // The checkpoint puts the seed's writes on disk now, not during the measured rounds (where it
  // would slow every commit, i.e. every marking read, and nothing else).
  const admin = new pg.Client({ connectionString: ADMIN_URL.replace(/\/[^/]*$/, `/${database}`) });
  await admin.connect();
  try {
    await admin.query('vacuum analyze bridge_messages');
    await admin.query('checkpoint');
  } finally {
    await admin.end();
  }

  const secret = randomBytes(32).toString('base64url');
  const platform = await startPlatform(['bridge'], {
    ...urls,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    IDENTITY_SECRET: secret,
    IDENTITY_TTL_SECONDS: '300',
    INTERNAL_API_KEY: randomBytes(32).toString('base64url'),
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
    QUEUE_PREFIX: `bench-${randomUUID()}`,
  });
  try {
    const origin = `http://127.0.0.1:${platform.env.BRIDGE_PORT}`;
    // Signed afresh for every load run: the run outlasts an identity's lifetime (at most 300 s).
    const headers = () => ({
      [IDENTITY_HEADER]: signIdentity(
        {
          surface: 'backend',
          auth: 'service',
          userId: null,
          email: null,
          admin: false,
          sessionId: null,
          keyId: null,
          requestId: 'bench-request',
        },
        secret,
        300,
      ),
    });
    const inbox = (channel: string) => `/api/bridge/inbox?channel=${channel}&limit=${PAGE}`;
    const full = `"count":${PAGE},`;
    const readers = CHANNELS.flatMap((channel) =>
      Array.from({ length: readersPerChannel }, (_, i) => `${inbox(channel)}&reader=bench-${channel}-${i}`),
    );
    const targets = {
      'baseline (unknown route, 404)': { paths: ['/bench-baseline'], status: 404 },
      'inbox, reader unknown (read only)': { paths: CHANNELS.map(inbox), status: 200, expect: full },
      [`inbox, ${readers.length} readers (each request marks 100 read)`]: { paths: readers, status: 200, expect: full },
    };
    const load = async (
      target: { paths: string[]; status: number; expect?: string },
      duration: number,
      fixedRate?: number,
    ): Promise<Load> => {
      const { stdout } = await promisify(execFile)(process.execPath, [
        join(import.meta.dirname, 'load.ts'),
        JSON.stringify({
          origin,
          headers: headers(),
          seconds: duration,
          connections,
          ...target,
          ...(fixedRate ? { rate: fixedRate } : {}),
        }),
      ]);
      return JSON.parse(stdout) as Load;
    };
    const ms = (x: number) => x.toFixed(1);
    const row = (name: string, r: Load) =>
      `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${r.errors + r.requests - r.answered} |`;

    for (const target of Object.values(targets)) await load(target, WARM_UP_SECONDS, rate);
    const lines = ['| run | req/s | p50 ms | p99 ms | max ms | errors |', '|---|---|---|---|---|---|'];
    // Alternate the targets so machine noise falls on all of them; the median drops a noisy round.
    const fixed = Object.fromEntries(Object.keys(targets).map((name) => [name, [] as Load[]]));
    for (let round = 1; round <= rounds; round++) {
      for (const [name, target] of Object.entries(targets)) {
        const result = await load(target, seconds, rate);
        fixed[name]!.push(result);
        lines.push(row(`${name} @ ${rate} req/s, round ${round}`, result));
      }
    }
    const max: Record<string, Load> = {};
    for (const [name, target] of Object.entries(targets)) {
      max[name] = await load(target, seconds);
      lines.push(row(`${name}, max throughput (${connections} in flight)`, max[name]!));
    }
    console.log(lines.join('\n'));

    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    const [baselineName] = Object.keys(targets);
    const baseline = {
      p50: median(fixed[baselineName!]!.map((r) => r.p50)),
      p99: median(fixed[baselineName!]!.map((r) => r.p99)),
    };
    console.log(`\nmedians of ${rounds} rounds at ${rate} req/s (open loop), max throughput closed loop:`);
    for (const [name, results] of Object.entries(fixed)) {
      const p50 = median(results.map((r) => r.p50));
      const p99 = median(results.map((r) => r.p99));
      const errors = results.reduce((sum, r) => sum + r.errors + r.requests - r.answered, 0);
      console.log(
        `${name}: p50 ${ms(p50)} ms, p99 ${ms(p99)} ms (${(p99 / baseline.p99).toFixed(1)}x baseline p99 ${ms(baseline.p99)} ms); ` +
          `max ${max[name]!.requestsPerSecond.toFixed(0)} req/s (${(max[name]!.requestsPerSecond / max[baselineName!]!.requestsPerSecond).toFixed(2)}x baseline); errors ${errors}`,
      );
    }
  } finally {
    await platform.stop();
  }
} finally {
  await system.destroy();
  await dropDatabase(ADMIN_URL, database);
}
