import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { assignTiers, TIER_ORDER, testFiles, tierOf } from '../../scripts/lib/test-tiers.ts';

t.test('every test file of the repository has the tier of the folder it lives in', async (t) => {
  const files = testFiles(repoRoot);
  t.ok(files.length > 90, 'the test files are found');
  const { byTier, problems } = assignTiers(files);
  t.same(problems, []);
  t.equal(
    byTier.unit.length + byTier.service.length + byTier.e2e.length + byTier.deploy.length + byTier.kubernetes.length,
    files.length,
  );
  t.ok(
    byTier.kubernetes.includes('libs/runtime/test/kubernetes/kubernetes-driver.test.ts'),
    'test/kubernetes/ runs on the cluster, a tier of its own',
  );
  t.same(
    byTier.deploy,
    ['test/deploy/compose-deployment.test.ts'],
    'the compose deployment is a tier of its own, run last',
  );
  t.ok(byTier.e2e.includes('test/paying-user-journey.test.ts'), 'the root test directory is end to end');
  t.ok(byTier.e2e.includes('services/agents/test/e2e/agents-openclaw.test.ts'), "a package's test/e2e/ is end to end");
  t.ok(
    byTier.service.includes('services/auth/test/accounts.test.ts'),
    "the rest of a package's tests are service tests",
  );
  t.ok(byTier.unit.includes('test/unit/test-tiers.test.ts'), 'test/unit/ is unit, at the root too');
});

t.test('the rules: first match wins; a file under no test/ folder is reported', async (t) => {
  t.equal(tierOf('libs/config/test/unit/deep/x.test.ts'), 'unit');
  t.equal(tierOf('services/agents/test/e2e/x.test.ts'), 'e2e');
  t.equal(tierOf('services/agents/test/support/x.test.ts'), 'service');
  t.equal(tierOf('test/deploy/x.test.ts'), 'deploy');
  t.equal(tierOf('test/faults/x.test.ts'), 'e2e');
  t.equal(tierOf('libs/runtime/test/kubernetes/x.test.ts'), 'kubernetes');
  t.same(
    TIER_ORDER,
    ['unit', 'service', 'e2e', 'deploy', 'kubernetes'],
    '`npm test` runs every tier, the cluster last',
  );
  const { byTier, problems } = assignTiers(['scripts/stray.test.ts', 'services/auth/test/accounts.test.ts']);
  t.same(byTier.service, ['services/auth/test/accounts.test.ts']);
  t.match(problems, [/^scripts\/stray.test.ts belongs to no test tier/]);
});

// The runner gives the unit tier no database or Redis; this says why a file would need one before it runs.
const REACHES_OUT =
  /from '(@agentyard\/(testing|db|queue)(\/[^']*)?|ioredis|bullmq|pg|kysely|dockerode|\.\/helper\.ts|\.\/[^']*harness\.ts|[./]*\/src\/(app|main|worker)\.ts)'/;

t.test('unit tests import no database, queue, Redis, container engine or service app', async (t) => {
  const { byTier } = assignTiers(testFiles(repoRoot));
  for (const file of byTier.unit) t.notMatch(readFileSync(join(repoRoot, file), 'utf8'), REACHES_OUT, file);
  t.match(`import { systemDb } from '${'@agentyard/testing'}';`, REACHES_OUT, 'the check sees a database helper');
});
