// `npm test`: type-check, lint, then every test of the project in tiers (scripts/lib/test-tiers.ts):
// unit tests with no database at all, then service and end-to-end tests against real PostgreSQL and
// Redis (and, where a test needs them, the container engine and local protocol peers), on a
// database made for this run alone. `npm test -- <files> [--grep=…]` runs those files (tap's
// options pass through); `--tier=<tier>` one tier.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { repoRoot } from '@agentyard/config';
import { dropDatabase } from '@agentyard/db/admin';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from './lib/platform.ts';
import { prepareBrowser, preparePlatformExtras } from './lib/extras.ts';
import { ensureConsoleBuilt } from './lib/console.ts';
import { compileCacheEnv } from './lib/processes.ts';
import { assignTiers, TIER_ORDER, type Tier, testFiles, tierOf } from './lib/test-tiers.ts';

const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const database = `agentyard_test_${runId}`;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const queuePrefix = `test-${runId}`;

const args = process.argv.slice(2);
const tierArg = args.find((a) => a.startsWith('--tier='))?.slice('--tier='.length);
// Other options (`--grep=…`, `--bail`) go to tap as they are; only the rest are files.
const tapOptions = args.filter((a) => a.startsWith('--') && !a.startsWith('--tier='));
const files = args.filter((a) => !a.startsWith('--'));
if (tierArg !== undefined && !(TIER_ORDER as readonly string[]).includes(tierArg)) {
  console.error(`unknown test tier ${tierArg}: one of ${TIER_ORDER.join(', ')}`);
  process.exit(1);
}

let platformEnv: NodeJS.ProcessEnv | undefined;
let code = 0;
if (files.length > 0) {
  // Files of one tier get that tier's environment: unit files start in a second, with no platform
  // prepared; the deployment runs its own stack with its longer timeout.
  const tiers = new Set(files.map((file) => tierOf(relative(repoRoot, resolve(file)))));
  const only = tiers.size === 1 ? [...tiers][0] : undefined;
  if (only === 'deploy') code = await runTap(['--timeout=1800', ...tapOptions, ...files], deployEnv());
  else if (only === 'kubernetes')
    code = await runTap(['--timeout=900', '--jobs=1', ...tapOptions, ...files], await kubernetesEnv());
  else code = await runTap([...tapOptions, ...files], only === 'unit' ? unitEnv() : await platform());
} else {
  const { byTier, problems } = assignTiers(testFiles(repoRoot));
  if (problems.length > 0) {
    for (const problem of problems) console.error(`# ${problem}`);
    process.exit(1);
  }
  if (tierArg === undefined) {
    // The whole suite also type-checks, lints and format-checks the tree: a red type is a failing test.
    for (const [what, bin, tool] of [
      ['type-check', 'node_modules/typescript/bin/tsc', ['--noEmit', '-p', 'tsconfig.json']],
      [
        'type-check the console',
        'node_modules/typescript/bin/tsc',
        ['--noEmit', '-p', 'services/console/tsconfig.json'],
      ],
      ['lint', 'node_modules/@biomejs/biome/bin/biome', ['lint', '--error-on-warnings', '.']],
      ['format check (npm run format writes it)', 'node_modules/@biomejs/biome/bin/biome', ['format', '.']],
    ] as const) {
      console.log(`# ${what}`);
      const result = spawnSync(process.execPath, [join(repoRoot, bin), ...tool], { stdio: 'inherit', cwd: repoRoot });
      if (result.status !== 0) {
        console.error(`# ${what} failed`);
        process.exit(1);
      }
    }
  }
  for (const tier of tierArg ? [tierArg as Tier] : TIER_ORDER) {
    if (byTier[tier].length === 0) continue;
    console.log(`# ${tier} tests (${byTier[tier].length} files)`);
    // The deployment builds images and brings a whole stack up and down: more than a file's usual 120 s.
    if (tier === 'kubernetes')
      code = await runTap(['--timeout=900', '--jobs=1', ...byTier[tier]], await kubernetesEnv());
    else
      code = await runTap(
        tier === 'deploy' ? ['--timeout=1800', ...byTier[tier]] : byTier[tier],
        tier === 'unit' ? unitEnv() : tier === 'deploy' ? deployEnv() : await platform(),
      );
    if (code !== 0) {
      console.error(`# ${tier} tests failed`);
      break;
    }
  }
}

if (platformEnv) await cleanUp();
process.exit(code);

/** The database, Redis prefix and secrets of this run, made once (the template is migrated and never connected to, so tests can clone private databases from it). */
async function platform(): Promise<NodeJS.ProcessEnv> {
  if (platformEnv) return platformEnv;
  ensureDataServices();
  // The edge serves the built console and the browser tests open it: built when its sources changed.
  ensureConsoleBuilt();
  const urls = await prepareDatabase(database);
  await prepareDatabase(`${database}_tpl`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...compileCacheEnv(),
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
  platformEnv = env;
  return env;
}

/** The deployment test brings up its own stack (its own PostgreSQL, Redis and engine socket): nothing of the host's platform. */
function deployEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ...compileCacheEnv(), NODE_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };
}

/**
 * The kubernetes tier runs on the cluster infra/kubernetes/up.sh builds and starts (idempotent:
 * seconds when it runs already, minutes for a first build): its kubeconfig is AGENTYARD_KUBECONFIG.
 * Its journeys run the whole platform with agents on the cluster: the run's database and Redis too.
 * One file at a time: files that cordon a node would leave the other's agents nowhere to go.
 */
async function kubernetesEnv(): Promise<NodeJS.ProcessEnv> {
  // The platform first: it builds the agent images that up.sh imports into the nodes (the other way
  // round, a first `npm run test:kubernetes` left the nodes without the OpenClaw image).
  const env = await platform();
  const up = spawnSync(join(repoRoot, 'infra/kubernetes/up.sh'), [], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (up.status !== 0) {
    console.error('# infra/kubernetes/up.sh failed: no cluster for the kubernetes tier');
    process.exit(1);
  }
  const kubeconfig = up.stdout.trim().split('\n').at(-1) ?? '';
  return { ...env, AGENTYARD_KUBECONFIG: kubeconfig };
}

/** Unit tests get no database and no Redis: every address refuses, so a unit test that reaches for one fails at once. */
function unitEnv(): NodeJS.ProcessEnv {
  const nowhere = 'postgres://unit-tests-have-no-database@127.0.0.1:1/none';
  return {
    ...process.env,
    ...compileCacheEnv(),
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    DATABASE_URL: nowhere,
    DATABASE_SYSTEM_URL: nowhere,
    DATABASE_OWNER_URL: nowhere,
    DATABASE_ADMIN_URL: nowhere,
    REDIS_URL: 'redis://127.0.0.1:1',
  };
}

async function runTap(tapArgs: string[], env: NodeJS.ProcessEnv): Promise<number> {
  ensureTapBuiltForNativeTypeScript();
  return new Promise<number>((resolve) => {
    const tap = spawn(process.execPath, [join(repoRoot, 'node_modules/tap/dist/esm/run.mjs'), ...tapArgs], {
      env,
      stdio: 'inherit',
      cwd: repoRoot,
    });
    tap.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
}

/**
 * tap ships built with its TypeScript loader; our config removes it (Node strips types itself).
 * tap rebuilds on a plugin change only after it has chosen the loaders of the run, so a first run
 * after `npm ci` would still load it: build once here, remembered in node_modules.
 */
function ensureTapBuiltForNativeTypeScript(): void {
  const marker = join(repoRoot, 'node_modules', '.agentyard-tap-build');
  const wanted = JSON.stringify(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).tap?.plugin ?? []);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return;
  const result = spawnSync(process.execPath, [join(repoRoot, 'node_modules/tap/dist/esm/run.mjs'), 'build'], {
    stdio: 'inherit',
    cwd: repoRoot,
  });
  if (result.status !== 0) throw new Error('tap build failed');
  writeFileSync(marker, wanted);
}

/** Drops this run's databases and Redis keys. */
async function cleanUp(): Promise<void> {
  for (const name of [database, `${database}_tpl`])
    await dropDatabase(ADMIN_URL, name).catch((error) => console.error(`could not drop ${name}: ${error}`));
  const redis = new Redis(redisUrl);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${queuePrefix}*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
}
