import t from 'tap';
import { globSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { repoRoot } from '@agentyard/config';

/**
 * The agents service's domain areas, from the top down (docs/architecture.md, "The agents
 * service"). A module imports from its own area or from an area below it, never from one above
 * or beside-and-above: the arrows between areas run one way, downward.
 */
const AGENTS_AREAS = ['settings', 'telemetry', 'workspace', 'runtime', 'gateway', 'agents'] as const;

const domain = join(repoRoot, 'services/agents/src/domain');

/** Every relative import of a module: static, type-only, re-exports and dynamic `import()`. */
const specifiersOf = (code: string) =>
  [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)'(\.\.?\/[^']+)'/g)].map((m) => m[1]!);
const importsOf = (file: string) =>
  specifiersOf(readFileSync(file, 'utf8')).map((specifier) => resolve(dirname(file), specifier));

/** The area a path of the service lies in ('' outside domain/). */
const areaOf = (path: string) => (path.startsWith(`${domain}/`) ? relative(domain, path).split('/')[0]! : '');

/** Each import that runs against the order, as `from → to`, for modules given as path → imports. */
function upwardImports(graph: Map<string, string[]>, order: readonly string[]): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = order.indexOf(areaOf(file));
    for (const target of targets) {
      const to = areaOf(target);
      if (!to) {
        if (/\/services\/agents\/src\/(routes|workers)\b|\/src\/app\.ts$/.test(target))
          wrong.push(
            `${relative(repoRoot, file)} → ${relative(repoRoot, target)} (domain imports no route, worker or app)`,
          );
        continue;
      }
      if (order.indexOf(to) < from)
        wrong.push(`${relative(repoRoot, file)} → ${relative(repoRoot, target)} (${areaOf(file)} is below ${to})`);
    }
  }
  return wrong;
}

t.test('every folder of the agents domain is a declared area', async (t) => {
  // A folder with no module in it is not one git keeps.
  const folders = readdirSync(domain).filter(
    (name) => statSync(join(domain, name)).isDirectory() && globSync('**/*.ts', { cwd: join(domain, name) }).length > 0,
  );
  t.ok(folders.length >= 4, `the areas are read (${folders.join(', ')})`);
  t.same(
    folders.filter((name) => !AGENTS_AREAS.includes(name as never)),
    [],
    'a new area takes its place in AGENTS_AREAS (and docs/architecture.md)',
  );
  t.same(
    readdirSync(domain).filter((name) => !statSync(join(domain, name)).isDirectory()),
    [],
    'every domain module lives in an area',
  );
});

t.test('imports between the areas of the agents domain only run downward', async (t) => {
  const files = globSync('**/*.ts', { cwd: domain }).map((file) => join(domain, file));
  t.ok(files.length > 30, 'the domain modules are read');
  t.same(upwardImports(new Map(files.map((file) => [file, importsOf(file)])), AGENTS_AREAS), []);
});

t.test('the check sees an upward and a sideways-up import, and a domain module importing a route', async (t) => {
  const at = (path: string) => join(repoRoot, 'services/agents/src', path);
  const graph = new Map([
    [at('domain/agents/agents.ts'), [at('domain/settings/devices.ts'), at('domain/agents/plans.ts')]],
    [at('domain/gateway/chat.ts'), [at('domain/runtime/health.ts')]],
    [at('domain/runtime/health.ts'), [at('domain/gateway/chat.ts'), at('routes/agents/deps.ts')]],
  ]);
  t.same(upwardImports(graph, AGENTS_AREAS), [
    'services/agents/src/domain/agents/agents.ts → services/agents/src/domain/settings/devices.ts (agents is below settings)',
    'services/agents/src/domain/gateway/chat.ts → services/agents/src/domain/runtime/health.ts (gateway is below runtime)',
    'services/agents/src/domain/runtime/health.ts → services/agents/src/routes/agents/deps.ts (domain imports no route, worker or app)',
  ]);
  t.same(
    specifiersOf(
      `import type { A } from '../a.ts';\nexport * from './b.ts';\nconst c = await import('./c.ts');\nimport './d.ts';\nimport { e } from '${'@agentyard/crypto'}';`,
    ),
    ['../a.ts', './b.ts', './c.ts', './d.ts'],
    'type-only imports, re-exports, dynamic and bare imports are read; packages are not',
  );
});

t.test('app.ts registers every agents route module itself, so the URL space reads from it', async (t) => {
  const src = join(repoRoot, 'services/agents/src');
  const registered = new Set(importsOf(join(src, 'app.ts')));
  // Registered inside gateway-proxies.ts, which keeps @fastify/reply-from and @fastify/websocket to their own context.
  for (const file of importsOf(join(src, 'routes/agents/gateway-proxies.ts'))) registered.add(file);
  const routeModules = globSync('routes/**/*.ts', { cwd: src })
    .map((file) => join(src, file))
    .filter((file) => /\bfastifyRoute\(/.test(readFileSync(file, 'utf8')));
  t.ok(routeModules.length > 15, 'the route modules are read');
  t.same(
    routeModules.filter((file) => !registered.has(file)).map((file) => relative(repoRoot, file)),
    [],
    'a route module registered by another plugin hides its URLs from app.ts',
  );
});
