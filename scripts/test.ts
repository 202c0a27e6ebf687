// `npm test`: every test of the project against real PostgreSQL and Redis (and, where a test needs
// them, the container engine and local protocol peers), on a database made for this run alone.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { repoRoot } from '@agentyard/config';
import { dropDatabase } from '@agentyard/db/admin';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from './lib/platform.ts';
import { prepareBrowser, preparePlatformExtras } from './lib/extras.ts';
import { ensureConsoleBuilt } from './lib/console.ts';

const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const database = `agentyard_test_${runId}`;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const queuePrefix = `test-${runId}`;

ensureDataServices();
// The edge serves the built console and the browser tests open it: built when its sources changed.
ensureConsoleBuilt();
// The template is migrated and never connected to, so tests can clone private databases from it.
const urls = await prepareDatabase(database);
await prepareDatabase(`${database}_tpl`);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ...urls,
  DATABASE_ADMIN_URL: ADMIN_URL,
  TEST_DATABASE: database,
  TEST_TEMPLATE_DATABASE: `${database}_tpl`,
  NODE_ENV: 'test',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  REDIS_URL: redisUrl,
  QUEUE_PREFIX: queuePrefix,
  IDENTITY_SECRET: randomBytes(32).toString('base64url'),
  SESSION_SECRET: randomBytes(32).toString('base64url'),
  INTERNAL_API_KEY: randomBytes(32).toString('base64url'),
  ENCRYPTION_KEYS: `t1:${randomBytes(32).toString('base64')}`,
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
};
Object.assign(env, await preparePlatformExtras(env));
const browser = prepareBrowser(env);
if (browser) env.CHROMIUM_PATH = browser;

const files = process.argv.slice(2);
if (files.length === 0) {
  // The whole suite also type-checks and lints the tree: a red type is a failing test.
  for (const [what, bin, args] of [['type-check', 'node_modules/typescript/bin/tsc', ['--noEmit', '-p', 'tsconfig.json']], ['type-check the console', 'node_modules/typescript/bin/tsc', ['--noEmit', '-p', 'services/console/tsconfig.json']], ['lint', 'node_modules/@biomejs/biome/bin/biome', ['lint', '--error-on-warnings', '.']]] as const) {
    console.log(`# ${what}`);
    const result = spawnSync(process.execPath, [join(repoRoot, bin), ...args], { stdio: 'inherit', cwd: repoRoot });
    if (result.status !== 0) {
      console.error(`# ${what} failed`);
      await cleanUp();
      process.exit(1);
    }
  }
}
const tapArgs = files.length > 0 ? files : [
  'proto-schemas/test/**/*.test.ts',
  'libs/*/test/**/*.test.ts',
  'services/*/test/**/*.test.ts',
  'test/**/*.test.ts',
];
ensureTapBuiltForNativeTypeScript();
const code = await new Promise<number>((resolve) => {
  const tap = spawn(process.execPath, [join(repoRoot, 'node_modules/tap/dist/esm/run.mjs'), ...tapArgs], { env, stdio: 'inherit', cwd: repoRoot });
  tap.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
});

await cleanUp();
process.exit(code);

/**
 * tap ships built with its TypeScript loader; our config removes it (Node strips types itself).
 * tap rebuilds on a plugin change only after it has chosen the loaders of the run, so a first run
 * after `npm ci` would still load it: build once here, remembered in node_modules.
 */
function ensureTapBuiltForNativeTypeScript(): void {
  const marker = join(repoRoot, 'node_modules', '.agentyard-tap-build');
  const wanted = JSON.stringify(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).tap?.plugin ?? []);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return;
  const result = spawnSync(process.execPath, [join(repoRoot, 'node_modules/tap/dist/esm/run.mjs'), 'build'], { stdio: 'inherit', cwd: repoRoot });
  if (result.status !== 0) throw new Error('tap build failed');
  writeFileSync(marker, wanted);
}

/** Drops this run's databases and Redis keys. */
async function cleanUp(): Promise<void> {
  for (const name of [database, `${database}_tpl`]) await dropDatabase(ADMIN_URL, name).catch((error) => console.error(`could not drop ${name}: ${error}`));
  const redis = new Redis(redisUrl);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${queuePrefix}*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
}
