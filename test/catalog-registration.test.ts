import t from 'tap';
import { join } from 'node:path';
import { repoRoot, SERVICE_NAMES } from '@agentyard/config';
import type { ServiceApp } from '@agentyard/http';
import { catalog, type Method } from '@agentyard/proto-schemas';
import { appDb, systemDb } from '@agentyard/testing';

// Every route the catalog gives a service is registered by that service, built as main.ts builds
// it; and no two specs share a method and url.
t.test('method and url are unique across the catalog', async (t) => {
  const seen = new Map<string, string>();
  for (const spec of catalog) {
    for (const method of [spec.method].flat()) {
      const key = `${method} ${spec.url}`;
      t.notOk(seen.has(key), `${key} is specified once`);
      seen.set(key, spec.service);
    }
  }
});

for (const service of SERVICE_NAMES) {
  t.test(`${service} registers every route the catalog gives it`, async (t) => {
    const src = join(repoRoot, 'services', service, 'src');
    const configModule = (await import(join(src, 'config.ts'))) as Record<string, unknown>;
    const load = Object.entries(configModule).find(
      ([key, value]) => /^load\w*Config$/.test(key) && typeof value === 'function',
    )![1] as (env: Record<string, string | undefined>) => unknown;
    const { buildApp } = (await import(join(src, 'app.ts'))) as {
      buildApp: (config: unknown, deps: object) => Promise<ServiceApp>;
    };
    const app = await buildApp(load({ ...process.env }), { db: appDb(), systemDb: systemDb() });
    t.teardown(() => app.close());
    const specs = catalog.filter((spec) => spec.service === service);
    t.ok(specs.length > 0, 'the catalog gives it routes');
    for (const spec of specs) {
      for (const method of [spec.method].flat() as Method[])
        t.ok(app.hasRoute({ method, url: spec.url }), `${method} ${spec.url}`);
    }
  });
}
