// `npm run bench:platform-start -- --rounds 3`: the CPU and the wait to start the whole platform
// (every service, worker and the edge, as npm start and each end-to-end test file start it), with
// Node's on-disk code cache (NODE_COMPILE_CACHE, primed by a first start) against without, in
// alternating rounds on one database.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dropDatabase } from '@agentyard/db/admin';
import { startWholePlatform } from '@agentyard/testing';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
import { cpuMicros, median } from '../rounds.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const cache = await mkdtemp(join(tmpdir(), 'agentyard-compile-cache-'));
const env = {
  ...urls,
  NODE_ENV: 'test',
  LOG_LEVEL: 'warn',
  QUEUE_PREFIX: `bench-start-${randomBytes(3).toString('hex')}`,
  IDENTITY_SECRET: randomBytes(32).toString('base64url'),
  SESSION_SECRET: randomBytes(32).toString('base64url'),
  INTERNAL_API_KEY: randomBytes(32).toString('base64url'),
  ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
  RUNTIME_DRIVER: 'process',
};

/** One start: wall time until every process listens, and the CPU they used to get there. */
async function start(withCache: boolean): Promise<{ waitMs: number; cpuMs: number }> {
  if (withCache) process.env.NODE_COMPILE_CACHE = cache;
  else delete process.env.NODE_COMPILE_CACHE;
  const began = performance.now();
  const platform = await startWholePlatform(env);
  const waitMs = performance.now() - began;
  const cpuMs = Object.values(platform.pids).reduce((sum, pid) => sum + cpuMicros(pid), 0) / 1000;
  await platform.stop();
  return { waitMs, cpuMs };
}

try {
  await start(true); // primes the cache
  const taken: Record<'cached' | 'uncached', { waitMs: number; cpuMs: number }[]> = { cached: [], uncached: [] };
  for (let round = 0; round < rounds; round++)
    for (const kind of ['uncached', 'cached'] as const) taken[kind].push(await start(kind === 'cached'));
  const show = (kind: 'cached' | 'uncached') =>
    `${kind}: CPU p50 ${median(taken[kind].map((r) => r.cpuMs)).toFixed(0)} ms, wait p50 ${median(taken[kind].map((r) => r.waitMs)).toFixed(0)} ms`;
  console.log(show('uncached'));
  console.log(show('cached'));
  const ratio = (key: 'cpuMs' | 'waitMs') =>
    (median(taken.cached.map((r) => r[key])) / median(taken.uncached.map((r) => r[key]))).toFixed(2);
  console.log(`cached ÷ uncached: CPU ${ratio('cpuMs')}×, wait ${ratio('waitMs')}×`);
} finally {
  await rm(cache, { recursive: true, force: true });
  await dropDatabase(ADMIN_URL, database);
}
