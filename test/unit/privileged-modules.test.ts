import t from 'tap';
import { existsSync, globSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { repoRoot } from '@agentyard/config';
import * as schemas from '@agentyard/proto-schemas';
import type { RouteSpec } from '@agentyard/proto-schemas';

// Architecture rule 2: cross-user work uses the RLS-bypassing system connection, in modules marked
// for it, and web route code never reaches one. The mark: the module lives in a `privileged/` folder
// (docs/conventions.md, "Database"). The composition roots open the connection and hand it on.

/** What using the system connection looks like in code. */
const SYSTEM_CONNECTION =
  /@agentyard\/db\/system|\bcreateSystemDb\b|\bSystemDb\b|\bsystemDb(?:Plugin)?\b|\bDATABASE_SYSTEM_URL\b/;
const ROOTS = /^services\/[^/]+\/src\/(app|main|worker|workers|config)\.ts$|^services\/[^/]+\/src\/workers\//;
const isPrivileged = (file: string) => file.split('/').includes('privileged');

/**
 * Web route modules that reach a privileged module today, each with why. The test fails when one is
 * added, and when one of these no longer does (then it leaves the list).
 */
const AGENT_ROUTE_DEPS =
  'AgentRouteDeps (routes/agents/deps.ts) hands every agents handler, web ones included, the runtime context, which runs container work (provisioning, start/stop, config apply, stats) on the system connection';
const OWNED_AGENT = `${AGENT_ROUTE_DEPS}; owned-agent.ts finds the agent on either surface, the backend's through scopedAgents`;
const WEB_REACHES_PRIVILEGED: Record<string, string> = {
  'services/agents/src/routes/agents/agent-config.ts': `${AGENT_ROUTE_DEPS}; saving enqueues a config apply (typed by the runtime)`,
  'services/agents/src/routes/agents/channels.ts': `${AGENT_ROUTE_DEPS}; a channel change enqueues a config apply (typed by the runtime)`,
  'services/agents/src/routes/agents/chat-memory-skills.ts': OWNED_AGENT,
  'services/agents/src/routes/agents/control-ui.ts': OWNED_AGENT,
  'services/agents/src/routes/agents/gateway-proxies.ts':
    'registers control-ui.ts (web) and runtime-proxy.ts (backend) with the same deps',
  'services/agents/src/routes/agents/instance.ts': `${AGENT_ROUTE_DEPS}; /api/instance actions and runtime provisioning drive the container`,
  'services/agents/src/routes/agents/messages.ts': OWNED_AGENT,
  'services/agents/src/routes/agents/lifecycle.ts': `${AGENT_ROUTE_DEPS}; the module serves both surfaces' lifecycle operations, the backend's through scopedAgents, the web's queued after an admission check`,
  'services/agents/src/routes/agents/provisioning.ts': `${AGENT_ROUTE_DEPS}; POST /api/provision queues the container's launch`,
  'services/agents/src/routes/agents/records.ts': `${OWNED_AGENT}; the module serves both surfaces' agent records`,
  'services/agents/src/routes/agents/runtime.ts': `${OWNED_AGENT}; the module serves both surfaces`,
  'services/agents/src/routes/agents/verification.ts': AGENT_ROUTE_DEPS,
  'services/agents/src/routes/agents/snapshots.ts': `${OWNED_AGENT}; both surfaces; a restore stops, rebuilds and copies the agent's state under its operation lock`,
  'services/ai/src/routes/demo-chat.ts':
    "the day's demo spend (every caller's) is read by usage-writer; its options type is declared by routes/privileged/ai.ts",
  'services/ai/src/routes/spending.ts':
    "the spend counters' type: app.ts builds them on the system connection and hands them in",
  'services/ai/src/routes/privileged/billing.ts':
    'the local checkout (development) completes and cancels subscriptions, which only the system role may write (billing rows)',
  'services/ai/src/routes/agent-gateway.ts':
    "the /v1 API (web: a user's API key; backend: an agent's own key) finds the agent a key names, whoever owns it, and the caller's plan; the edge has checked no session here",
  'services/ai/src/routes/gateway-routing.ts':
    "POST /api/v1/gateway runs AI calls and charges plugin fees through the AI gateway: the caller's plan from the cached lookups, the spend counters' reservations and the usage writer, all built on the system connection by app.ts",
  'services/ai/src/routes/summarizer.ts':
    "a summary is an AI call of the caller's: the same plan lookups, spend counters and usage writer as the gateway's",
  'services/ai/src/routes/privileged/stripe-webhook.ts':
    "Stripe's signed webhook comes in on the web surface without a session and finds its customer's user",
  'services/ai/src/routes/privileged/usage-reports.ts':
    'usage summary is on both surfaces; the backend reports usage across users',
  'services/auth/src/routes/accounts.ts':
    'the verification mail job type is declared in outbound-email (the worker sends it on the system connection)',
  'services/auth/src/routes/passwords.ts':
    'the reset mail job type is declared in outbound-email (the worker sends it on the system connection)',
  'services/auth/src/routes/privileged/email-webhooks.ts':
    "the mail provider's signed webhook (web surface, no session) records events for any address",
  'services/auth/src/routes/privileged/invites.ts': "the admins' invite list spans every user's invites",
  'services/auth/src/routes/privileged/security-events.ts':
    'RISC security events (web surface, signed, no session) act on any user',
};

const stripComments = (code: string) => code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
const code = (file: string) => stripComments(readFileSync(join(repoRoot, file), 'utf8'));
const usesSystemConnection = (source: string) => SYSTEM_CONNECTION.test(source);

const modules = globSync('services/*/src/**/*.ts', { cwd: repoRoot })
  .map((file) => file.split(sep).join('/'))
  .filter((file) => !file.startsWith('services/console/'));

/** The relative imports of a module (type-only ones too: they say what it works with), as repo paths. */
function importsOf(file: string, source = code(file)): string[] {
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)'(\.\.?\/[^']+)'/g)]
    .map((m) =>
      relative(repoRoot, resolve(repoRoot, dirname(file), m[1]!))
        .split(sep)
        .join('/'),
    )
    .filter((target) => existsSync(join(repoRoot, target)));
}

/** Every module a module reaches through its imports, itself included; `stopAt` modules are reached, not gone through. */
function reach(
  file: string,
  graph: (f: string) => string[],
  stopAt: (f: string) => boolean = () => false,
): Set<string> {
  const seen = new Set<string>();
  const stack = [file];
  while (stack.length) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    if (next === file || !stopAt(next)) stack.push(...graph(next));
  }
  return seen;
}

/** The catalog's route maps, by export name. */
const isRouteMap = (value: unknown): value is Record<string, RouteSpec> => {
  const entries = value && typeof value === 'object' && !Array.isArray(value) ? Object.values(value) : [];
  return (
    entries.length > 0 &&
    entries.every(
      (spec) => spec && typeof spec === 'object' && 'url' in spec && 'surfaces' in spec && 'service' in spec,
    )
  );
};
const routeMaps = new Map(
  Object.entries(schemas).flatMap(([name, value]) => (isRouteMap(value) ? [[name, value] as const] : [])),
);

/**
 * The catalog routes a route module registers handlers for: `map.name` of a route map it imports
 * (under any alias); where it indexes a map (`map[name]`), the names it spells as string literals,
 * or, when it spells none, every route of the map (over, never under).
 */
export function routesServedBy(source: string, service: string): RouteSpec[] {
  const imported = [...source.matchAll(/^import\s+\{([^}]*)\}\s+from\s+'@agentyard\/proto-schemas'/gm)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part && !part.startsWith('type '))
      .map((part) => {
        const [name, alias] = part.split(/\s+as\s+/);
        return { name: name!.trim(), alias: (alias ?? name)!.trim() };
      })
      .filter(({ name }) => routeMaps.has(name)),
  );
  const served: RouteSpec[] = [];
  for (const { name, alias } of imported) {
    const map = routeMaps.get(name)!;
    const named = new Set([...source.matchAll(new RegExp(`\\b${alias}\\.(\\w+)`, 'g'))].map((m) => m[1]!));
    if (new RegExp(`\\b${alias}\\s*\\[`).test(source)) {
      const spelled = Object.keys(map).filter((key) => new RegExp(`['"\`]${key}['"\`]`).test(source));
      for (const key of spelled.length ? spelled : Object.keys(map)) named.add(key);
    }
    for (const key of named) {
      const route = map[key];
      if (route?.service === service) served.push(route);
    }
  }
  return served;
}

const serviceOf = (file: string) => file.split('/')[1]!;
const routeModules = modules.filter((file) => /^services\/[^/]+\/src\/routes\//.test(file));
const directWeb = routeModules.filter((file) =>
  routesServedBy(code(file), serviceOf(file)).some((spec) => spec.surfaces.includes('web')),
);
/** A route plugin that registers a web route module is web route code too. */
const webRouteModules = [
  ...reach('', (f) => (f === '' ? directWeb : routeModules.filter((file) => importsOf(file).includes(f)))),
]
  .filter(Boolean)
  .sort();

t.test('a module that uses the system connection is marked privileged, and a privileged module uses it', async (t) => {
  t.ok(modules.length > 150, 'every service module is read');
  const unmarked = modules.filter(
    (file) => !ROOTS.test(file) && !isPrivileged(file) && usesSystemConnection(code(file)),
  );
  t.same(unmarked, [], 'uses the system connection outside a privileged/ folder');
  const idle = modules.filter((file) => isPrivileged(file) && !usesSystemConnection(code(file)));
  t.same(idle, [], 'in a privileged/ folder without using the system connection');
  t.same(
    modules.filter((file) => /-system\.ts$/.test(file)),
    [],
    'the old mark (`-system.ts`, read as "the … subsystem") is gone',
  );
  t.ok(modules.filter(isPrivileged).length >= 10, 'the privileged modules are found');
});

t.test("no web route module's imports reach a privileged module", async (t) => {
  t.ok(directWeb.length > 30, `the web route modules are found (${directWeb.length})`);
  const found: Record<string, string[]> = {};
  for (const file of webRouteModules) {
    // The first privileged module on each chain: where web route code crosses into the system connection.
    const privileged = [...reach(file, (f) => importsOf(f), isPrivileged)].filter(isPrivileged).sort();
    if (privileged.length) found[file] = privileged;
  }
  const unexpected = Object.fromEntries(Object.entries(found).filter(([file]) => !(file in WEB_REACHES_PRIVILEGED)));
  t.same(unexpected, {}, 'a web route module reaches the system connection');
  t.same(
    Object.keys(WEB_REACHES_PRIVILEGED).filter((file) => !(file in found)),
    [],
    'a listed exception no longer reaches one: take it off the list',
  );
});

t.test('the checks see a use, a route spec by alias, by index, and a chain of imports', async (t) => {
  t.ok(usesSystemConnection(`import type { SystemDb } from '${'@agentyard/db/system'}';`));
  t.ok(usesSystemConnection('const db = createSystemDb(config.DATABASE_SYSTEM_URL);'));
  t.notOk(usesSystemConnection(stripComments('// not createSystemDb here\nconst x = 1;')));
  const aliased = `import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';\napp.route({ ...fastifyRoute(spec.rename), handler });`;
  t.same(
    routesServedBy(aliased, 'agents').map((s) => s.surfaces),
    [['web']],
  );
  const indexed = `import { agentRoutes as spec, fastifyRoute } from '@agentyard/proto-schemas';\nfor (const name of ['start', 'stop'] as const) app.route({ ...fastifyRoute(spec[name]), handler });`;
  t.same(
    routesServedBy(indexed, 'agents').map((s) => s.url),
    [schemas.agentRoutes.start.url, schemas.agentRoutes.stop.url],
  );
  const graph = new Map([
    ['r.ts', ['a.ts']],
    ['a.ts', ['privileged/b.ts']],
  ]);
  t.ok(
    [...reach('r.ts', (f) => graph.get(f) ?? [])].some(isPrivileged),
    'a privileged module two imports away is reached',
  );
});
