import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from '@agentyard/config';

export const CONSOLE_ROOT = join(repoRoot, 'services', 'console');
export const CONSOLE_DIST = join(CONSOLE_ROOT, 'dist');
const HASH_FILE = join(CONSOLE_DIST, '.source-hash');

/** What the built console depends on: its sources and config, the schemas its types come from, the lockfile. */
const INPUTS = [
  join(CONSOLE_ROOT, 'src'),
  join(CONSOLE_ROOT, 'public'),
  join(CONSOLE_ROOT, 'index.html'),
  join(CONSOLE_ROOT, 'vite.config.ts'),
  join(CONSOLE_ROOT, 'package.json'),
  join(CONSOLE_ROOT, 'tsconfig.json'),
  join(repoRoot, 'proto-schemas', 'src'),
  join(repoRoot, 'package-lock.json'),
];

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .flatMap((entry) => filesUnder(join(path, entry.name)))
    .sort();
}

/** One hash of every input's path and bytes: the build is current when its recorded hash equals it. */
export function consoleSourceHash(): string {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(filesUnder))
    hash.update(relative(repoRoot, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/**
 * Builds the console with Vite into services/console/dist when its sources changed since the last
 * build (or `force`), saying so; returns whether it built.
 */
export function ensureConsoleBuilt({
  force = false,
  log = console.log,
}: {
  force?: boolean;
  log?: (line: string) => void;
} = {}): boolean {
  const wanted = consoleSourceHash();
  const built = existsSync(HASH_FILE) ? readFileSync(HASH_FILE, 'utf8').trim() : undefined;
  if (!force && built === wanted && existsSync(join(CONSOLE_DIST, 'index.html'))) {
    log('console: built and current (services/console/dist)');
    return false;
  }
  log(
    built === undefined
      ? 'console: not built yet; building with Vite…'
      : 'console: sources changed; rebuilding with Vite…',
  );
  const result = spawnSync(
    process.execPath,
    [join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'],
    { cwd: CONSOLE_ROOT, stdio: 'inherit' },
  );
  if (result.status !== 0) throw new Error('console: vite build failed (see above)');
  writeFileSync(HASH_FILE, wanted);
  log('console: built into services/console/dist');
  return true;
}
