// The tiers `npm test` runs, in this order, and which test file belongs to which.
import { globSync } from 'node:fs';
import { matchesGlob } from 'node:path';

export type Tier = 'unit' | 'service' | 'e2e' | 'deploy' | 'kubernetes';

/**
 * Where a test file lives says its tier (the first rule it matches):
 * - unit (a `test/unit/` folder, of a package or the root): pure functions; no database, Redis, container engine or service app (the
 *   runner gives them none). Seconds.
 * - deploy (`test/deploy/`): docker-compose.yml brought up for real (podman-compose, images built
 *   here), last: minutes of builds and a whole stack. `npm run test:deploy` runs it alone.
 * - kubernetes (a `test/kubernetes/` folder): runs on the Kubernetes cluster infra/kubernetes/up.sh
 *   builds and starts on this machine (minutes the first time). Not in `npm test`'s order yet;
 *   `npm run test:kubernetes` runs it alone.
 * - e2e (a package's `test/e2e/` folder, and the rest of the root `test/`): the platform end to end, and anything that runs real
 *   agents (containers, OpenClaw).
 * - service (any other `test/` of proto-schemas, a lib or a service): one service or library through
 *   `inject` or its own process, on PostgreSQL and Redis.
 * A test file no rule matches stops the run.
 */
export const TIER_RULES: readonly { tier: Tier; pattern: string }[] = [
  { tier: 'unit', pattern: '**/test/unit/**/*.test.ts' },
  { tier: 'deploy', pattern: 'test/deploy/**/*.test.ts' },
  { tier: 'kubernetes', pattern: '**/test/kubernetes/**/*.test.ts' },
  { tier: 'e2e', pattern: '**/test/e2e/**/*.test.ts' },
  { tier: 'e2e', pattern: 'test/**/*.test.ts' },
  { tier: 'service', pattern: '{proto-schemas,libs/*,services/*}/test/**/*.test.ts' },
];

/** The tiers `npm test` runs, in order (`--tier=<tier>` runs one alone). */
export const TIER_ORDER: readonly Tier[] = ['unit', 'service', 'e2e', 'deploy', 'kubernetes'];

/** Every test file of the repository, relative to `root`. */
export function testFiles(root: string): string[] {
  return globSync('**/*.test.ts', {
    cwd: root,
    exclude: (path) => /(^|\/)(node_modules|\.[^/]+)$/.test(String(path)),
  }).sort();
}

/** The tier `file` belongs to (a path relative to the repository), or undefined when no rule matches it. */
export function tierOf(file: string, rules: readonly { tier: Tier; pattern: string }[] = TIER_RULES): Tier | undefined {
  return rules.find((rule) => matchesGlob(file, rule.pattern))?.tier;
}

/** The files of each tier, and the files no rule places. */
export function assignTiers(
  files: readonly string[],
  rules = TIER_RULES,
): { byTier: Record<Tier, string[]>; problems: string[] } {
  const byTier: Record<Tier, string[]> = { unit: [], service: [], e2e: [], deploy: [], kubernetes: [] };
  const problems: string[] = [];
  for (const file of files) {
    const tier = tierOf(file, rules);
    if (tier) byTier[tier].push(file);
    else problems.push(`${file} belongs to no test tier: put it under a test/ folder (scripts/lib/test-tiers.ts)`);
  }
  return { byTier, problems };
}
