import { readFileSync } from 'node:fs';
import t from 'tap';
import { repoRoot } from '@agentyard/config';
import { catalog, namedScopes, RATE_LIMIT_SCOPES, type RateLimitScope } from '@agentyard/proto-schemas';
import { scopesFor } from '../../src/plugins/rate-limits.ts';

const scopes: readonly RateLimitScope[] = RATE_LIMIT_SCOPES;
const byName = new Map(scopes.map((scope) => [scope.name, scope]));
const routeLines = catalog.flatMap((spec) =>
  [spec.method].flat().map((method) => ({ line: `${method} ${spec.url}`, spec })),
);

t.test('every method and url of the catalog is declared once', async (t) => {
  const seen = new Map<string, string>();
  for (const { line, spec } of routeLines) {
    if (seen.has(line)) t.fail(`${line} is declared twice (${seen.get(line)}; ${spec.summary})`);
    seen.set(line, spec.summary);
  }
  t.equal(seen.size, routeLines.length);
});

t.test(
  'every scope a spec names is in the table, on a surface the route is served on, and not surface-wide',
  async (t) => {
    for (const spec of catalog) {
      for (const name of namedScopes(spec)) {
        const scope = byName.get(name);
        if (!scope) {
          t.fail(`${spec.url} names ${name}, which is not in the table`);
          continue;
        }
        if (!spec.surfaces.includes(scope.surface))
          t.fail(`${spec.url} names ${name}, a ${scope.surface} scope, but is not served there`);
        if (scope.everyUrlUnder) t.fail(`${spec.url} names the surface-wide ${name}`);
      }
    }
    t.equal(new Set(scopes.map((scope) => scope.name)).size, scopes.length, 'scope names are unique');
  },
);

t.test('every scope is named by a route, is surface-wide, or awaits a route not in the catalog yet', async (t) => {
  const named = new Set(catalog.flatMap((spec) => namedScopes(spec)));
  for (const scope of scopes) {
    const used = named.has(scope.name as never) || scope.everyUrlUnder !== undefined;
    t.ok(used || (scope.awaitingRoutes?.length ?? 0) > 0, `${scope.name} limits something or says what it waits for`);
    for (const awaited of scope.awaitingRoutes ?? []) {
      const route = routeLines.find(({ line, spec }) => line === awaited && spec.surfaces.includes(scope.surface));
      // Once the route is in the catalog its spec must name the scope (then drop it from awaitingRoutes).
      if (route)
        t.ok(namedScopes(route.spec).includes(scope.name as never), `${awaited} now exists and names ${scope.name}`);
    }
  }
});

t.test("every route of a scope's family names it (a new route under /api/ai cannot escape backend-ai)", async (t) => {
  for (const scope of scopes.filter((s) => s.namedUnder !== undefined)) {
    const family = catalog.filter(
      (spec) =>
        spec.surfaces.includes(scope.surface) &&
        (spec.url === scope.namedUnder || spec.url.startsWith(`${scope.namedUnder}/`)),
    );
    for (const spec of family)
      t.ok(
        namedScopes(spec).includes(scope.name as never),
        `${[spec.method].flat().join(',')} ${spec.url} names ${scope.name}`,
      );
  }
});

t.test('RATE_LIMITS overrides any scope by name and refuses unknown names and bad numbers', async (t) => {
  for (const scope of scopes) {
    t.equal(scopesFor(scope.surface, `${scope.name}=7`).find((s) => s.name === scope.name)?.max, 7, scope.name);
  }
  t.throws(() => scopesFor('web', 'web-nothing=3'), /bad entry web-nothing=3/);
  t.throws(() => scopesFor('web', 'web-login=0'), /bad entry/);
  t.throws(() => scopesFor('web', 'web-login=2.5'), /bad entry/);
});

/** `20 / 15 minutes`, as docs/limits.md writes a scope's number. */
function limitText(scope: RateLimitScope): string {
  const minutes = scope.windowMs / 60_000;
  const window = minutes === 1 ? 'minute' : minutes === 60 ? 'hour' : `${minutes} minutes`;
  return `${scope.max} / ${window}`;
}

t.test('docs/limits.md lists every scope with its number', async (t) => {
  const doc = readFileSync(`${repoRoot}/docs/limits.md`, 'utf8');
  const section = doc.slice(doc.indexOf('## Rate limits'), doc.indexOf('\n## ', doc.indexOf('## Rate limits') + 1));
  const rows = new Map(
    [...section.matchAll(/^\| `([a-z-]+)` \| .* \| ([^|]+) \|$/gm)].map((m) => [m[1]!, m[2]!.trim()]),
  );
  t.same([...rows.keys()].sort(), scopes.map((scope) => scope.name).sort(), 'one row per scope');
  for (const scope of scopes) t.equal(rows.get(scope.name), limitText(scope), scope.name);
});
