import { readFileSync } from 'node:fs';
import t from 'tap';
import { CONFIGURATION_DOC, configurationDoc } from '../../scripts/env-docs.ts';

t.test(
  'docs/configuration.md lists every setting as the config schemas describe it (npm run env-docs rewrites it)',
  async (t) => {
    t.equal(readFileSync(CONFIGURATION_DOC, 'utf8'), await configurationDoc());
  },
);
