// The tiers `npm test` runs, in this order, and which test file belongs to which.
import { globSync } from 'node:fs';
import { matchesGlob } from 'node:path';

export type Tier = 'unit' | 'service' | 'e2e' | 'deploy';

/**
 * - unit: pure functions; no database, Redis, container engine or service app (the runner gives
 *   them none). Seconds.
 * - service: one service or library through `inject` or its own process, on PostgreSQL and Redis.
 * - e2e: the platform end to end, and anything that runs real agents (containers, OpenClaw).
 * - deploy: docker-compose.yml brought up for real (podman-compose, images built here), last:
 *   minutes of builds and a whole stack. `npm run test:deploy` runs it alone.
 * A file named in a tier belongs to it; any other test file belongs to the tier whose directory
 * pattern it matches. A test file in no tier, or in two, stops the run.
 */
export const TEST_TIERS: Record<Tier, readonly string[]> = {
  unit: [
    'libs/agent-gateway/test/answer-size-cap.test.ts',
    'libs/config/test/load-config.test.ts',
    'libs/crypto/test/keyring.test.ts',
    'libs/http/test/log-redaction.test.ts',
    'libs/identity/test/identity.test.ts',
    'libs/runtime/test/launch-slots.test.ts',
    'libs/runtime/test/quiet-period.test.ts',
    'libs/runtime/test/warm-classes.test.ts',
    'services/agents/test/agent-log-redaction.test.ts',
    'services/console/test/agent-work-logic.test.ts',
    'services/console/test/logic.test.ts',
    'services/edge/test/catalog-scopes.test.ts',
    'services/edge/test/health-levels.test.ts',
    'services/scheduler/test/cron-firings.test.ts',
    'test/configuration-docs.test.ts',
    'test/dev-mailbox.test.ts',
    'test/docker-compose.test.ts',
    'test/import-cycles.test.ts',
    'test/test-tiers.test.ts',
  ],
  service: ['proto-schemas/test/**/*.test.ts', 'libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts'],
  e2e: [
    'test/**/*.test.ts',
    'libs/agent-gateway/test/control-plane.test.ts',
    'libs/runtime/test/process-driver.test.ts',
    // The agents service with its workers on the real agent runtime (startAgents), or OpenClaw itself.
    'services/agents/test/agent-work-chat-memory.test.ts',
    'services/agents/test/agent-work-control-ui.test.ts',
    'services/agents/test/agent-work-skills-devices.test.ts',
    'services/agents/test/agent-workspace.test.ts',
    'services/agents/test/agents-config.test.ts',
    'services/agents/test/agents-container-lifecycle.test.ts',
    'services/agents/test/agents-isolation.test.ts',
    'services/agents/test/agents-last-error.test.ts',
    'services/agents/test/agents-messages-openclaw.test.ts',
    'services/agents/test/agents-openclaw-config.test.ts',
    'services/agents/test/agents-openclaw.test.ts',
    'services/agents/test/agents-operations.test.ts',
    'services/agents/test/agents-process-lifecycle.test.ts',
    'services/agents/test/agents-provisioning-rules.test.ts',
    'services/agents/test/agents-reconciler.test.ts',
    'services/agents/test/agents-runtime-provision.test.ts',
    'services/agents/test/agents-skill-limits.test.ts',
    'services/agents/test/agents-tier-cannot-raise-plan.test.ts',
    'services/agents/test/agents-warm-pool.test.ts',
  ],
  deploy: ['test/compose-deployment.test.ts'],
};

/** The tiers `npm test` runs, in order. */
export const TIER_ORDER: readonly Tier[] = ['unit', 'service', 'e2e', 'deploy'];

const isPattern = (entry: string) => /[*?[{]/.test(entry);

/** Every test file of the repository, relative to `root`. */
export function testFiles(root: string): string[] {
  return globSync('**/*.test.ts', { cwd: root, exclude: (path) => /(^|\/)(node_modules|\.[^/]+)$/.test(String(path)) }).sort();
}

/** The tiers `file` belongs to: one, or none or several (a mistake the run reports). */
export function tiersOf(file: string, tiers: Record<Tier, readonly string[]> = TEST_TIERS): Tier[] {
  const named = TIER_ORDER.filter((tier) => tiers[tier].some((entry) => !isPattern(entry) && entry === file));
  if (named.length > 0) return named;
  return TIER_ORDER.filter((tier) => tiers[tier].some((entry) => isPattern(entry) && matchesGlob(file, entry)));
}

/** The files of each tier, and what is wrong with the manifest: files in no tier or in two, names of files that do not exist. */
export function assignTiers(files: readonly string[], tiers: Record<Tier, readonly string[]> = TEST_TIERS): { byTier: Record<Tier, string[]>; problems: string[] } {
  const byTier: Record<Tier, string[]> = { unit: [], service: [], e2e: [], deploy: [] };
  const problems: string[] = [];
  for (const file of files) {
    const of = tiersOf(file, tiers);
    if (of.length === 1) byTier[of[0]!].push(file);
    else problems.push(of.length === 0 ? `${file} belongs to no test tier (scripts/lib/test-tiers.ts)` : `${file} is in several test tiers: ${of.join(', ')}`);
  }
  const existing = new Set(files);
  for (const tier of TIER_ORDER) {
    for (const entry of tiers[tier]) if (!isPattern(entry) && !existing.has(entry)) problems.push(`${entry} (${tier} tier) is no test file`);
  }
  return { byTier, problems };
}
