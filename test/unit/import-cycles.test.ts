import t from 'tap';
import { globSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { repoRoot } from '@agentyard/config';

/** Relative imports of every module of the services and libraries, type imports included. */
function importGraph(): Map<string, string[]> {
  const files = globSync(['services/*/src/**/*.ts', 'libs/*/src/**/*.ts'], { cwd: repoRoot }).map((f) =>
    resolve(repoRoot, f),
  );
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const imports = [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms)].map(
        (m) => resolve(dirname(file), m[1]!),
      );
      return [file, imports.filter((target) => known.has(target))];
    }),
  );
}

/** Each cycle once, as the chain of files that closes it. */
function cyclesOf(graph: Map<string, string[]>): string[] {
  const cycles: string[] = [];
  const visiting: string[] = [];
  const done = new Set<string>();
  const visit = (file: string) => {
    visiting.push(file);
    for (const target of graph.get(file) ?? []) {
      if (visiting.includes(target))
        cycles.push(
          [...visiting.slice(visiting.indexOf(target)), target].map((f) => relative(repoRoot, f)).join(' → '),
        );
      else if (!done.has(target)) visit(target);
    }
    visiting.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return cycles;
}

t.test('no module of a service or library imports, through any chain, a module that imports it', async (t) => {
  const graph = importGraph();
  t.ok(graph.size > 100, 'the services and libraries are read');
  t.same(cyclesOf(graph), []);
});

t.test('the cycle finder sees a cycle of type imports', async (t) => {
  const a = resolve(repoRoot, 'a.ts');
  const b = resolve(repoRoot, 'b.ts');
  t.same(
    cyclesOf(
      new Map([
        [a, [b]],
        [b, [a]],
      ]),
    ),
    ['a.ts → b.ts → a.ts'],
  );
});

t.test(
  'agents route files take their dependencies from a leaf module, never from app.ts that registers them',
  async (t) => {
    const graph = importGraph();
    const app = resolve(repoRoot, 'services/agents/src/app.ts');
    const routes = resolve(repoRoot, 'services/agents/src/routes');
    const importers = [...graph]
      .filter(([file, targets]) => file.startsWith(routes) && targets.includes(app))
      .map(([file]) => relative(repoRoot, file));
    t.ok([...graph.keys()].filter((file) => file.startsWith(routes)).length > 5, 'the route files are read');
    t.same(importers, []);
    t.same(
      graph.get(resolve(repoRoot, 'services/agents/src/routes/agents/deps.ts'))?.filter((f) => f.includes('/routes/')),
      [],
    );
  },
);
