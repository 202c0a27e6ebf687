import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { assignTiers, testFiles, TEST_TIERS } from '../scripts/lib/test-tiers.ts';

t.test('every test file of the repository is in exactly one tier, and the tiers name only test files', async (t) => {
  const files = testFiles(repoRoot);
  t.ok(files.length > 90, 'the test files are found');
  const { byTier, problems } = assignTiers(files);
  t.same(problems, []);
  t.equal(byTier.unit.length + byTier.service.length + byTier.e2e.length + byTier.deploy.length, files.length);
  t.same(byTier.deploy, ['test/compose-deployment.test.ts'], 'the compose deployment is a tier of its own, run last');
  t.ok(byTier.e2e.includes('test/paying-user-journey.test.ts'), 'the root test directory is end to end');
  t.ok(byTier.service.includes('services/auth/test/accounts.test.ts'), "a service's tests are service tests unless named elsewhere");
  t.ok(byTier.unit.includes('test/test-tiers.test.ts'), 'a named file leaves the tier its directory would give it');
});

t.test('a test file in no tier, in two, or a tier naming a missing file is reported', async (t) => {
  const tiers = { ...TEST_TIERS, unit: [...TEST_TIERS.unit, 'libs/config/test/gone.test.ts'], service: [...TEST_TIERS.service, 'libs/config/test/load-config.test.ts'] };
  const { byTier, problems } = assignTiers(['scripts/stray.test.ts', 'libs/config/test/load-config.test.ts', 'services/auth/test/accounts.test.ts'], tiers);
  t.same(byTier.service, ['services/auth/test/accounts.test.ts']);
  const about = (file: string) => problems.filter((problem) => problem.startsWith(`${file} `));
  t.match(about('scripts/stray.test.ts'), [/belongs to no test tier/]);
  t.match(about('libs/config/test/load-config.test.ts'), [/is in several test tiers: unit, service/]);
  t.match(about('libs/config/test/gone.test.ts'), [/\(unit tier\) is no test file/]);
});

// The runner gives the unit tier no database or Redis; this says why a file would need one before it runs.
const REACHES_OUT = /from '(@agentyard\/(testing|db|queue)(\/[^']*)?|ioredis|bullmq|pg|kysely|dockerode|\.\/helper\.ts|\.\/[^']*harness\.ts|[./]*\/src\/(app|main|worker)\.ts)'/;

t.test('unit tests import no database, queue, Redis, container engine or service app', async (t) => {
  const { byTier } = assignTiers(testFiles(repoRoot));
  for (const file of byTier.unit) t.notMatch(readFileSync(join(repoRoot, file), 'utf8'), REACHES_OUT, file);
  t.match(`import { systemDb } from '${'@agentyard/testing'}';`, REACHES_OUT, 'the check sees a database helper');
});
