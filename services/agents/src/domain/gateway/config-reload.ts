import { isDeepStrictEqual } from 'node:util';
import { isObject } from '../agents/config-document.ts';

/** The OpenClaw version whose reload rules below are copied (the agent image's, infra/agent-image/build.sh). */
export const OPENCLAW_VERSION = '2026.9.6';

/**
 * How a running gateway takes a change of its openclaw.json: it watches the file, and applies a
 * change in place (`hot-reload`) unless a changed path needs the gateway to start again (`restart`).
 */
export type ReloadKind = 'hot-reload' | 'restart';

/**
 * OpenClaw 2026.9.6's reload rules (dist/config-reload-plan-*.mjs, `CORE_RELOAD_POLICIES` and
 * `DEFAULT_RELOAD_POLICIES`), the paths that restart its gateway: the longest matching prefix wins,
 * and a path no rule names restarts it too. Every other prefix below applies in place or is read
 * live ('none'), which the platform answers as a hot reload.
 */
const RULES: [prefix: string, restart: boolean][] = [
  ['gateway.remote', false],
  ['gateway.reload', false],
  ['gateway.auth.token', true],
  ['gateway.auth.password', true],
  ['secrets.egressProxy', true],
  ['gateway.portals', true],
  ['gateway.http.endpoints', false],
  ['gateway.tools', false],
  ['gateway.controlUi.enabled', false],
  ['gateway.controlUi.allowedOrigins', false],
  ['gateway.auth.rateLimit', false],
  ['gateway.trustedProxies', false],
  ['gateway.publicOrigin', false],
  ['agents', false],
  ['models', false],
  ['hooks', false],
  ['cron', false],
  ['plugins', false],
  ['channels', false],
  ['meta', false],
  ['identity', false],
  ['logging', false],
  ['bindings', false],
  ['messages', false],
  ['session', false],
  ['skills', false],
  ['tools', false],
  ['secrets', false],
  ['ui', false],
  ['mcp', false],
  ['gateway', true],
  ['discovery', true],
];

const matches = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}.`);

/** Whether OpenClaw restarts its gateway for a change at `path` (dotted). */
export function restartsGateway(path: string): boolean {
  const rule = RULES.filter(([prefix]) => matches(path, prefix)).sort(
    ([a], [b]) => b.split('.').length - a.split('.').length,
  )[0];
  return rule ? rule[1] : true;
}

/** The dotted paths whose values differ between two configurations (objects key by key, arrays and values whole), as OpenClaw diffs them. */
export function changedPaths(before: unknown, after: unknown, prefix = ''): string[] {
  if (isObject(before) && isObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((key) => changedPaths(before[key], after[key], prefix ? `${prefix}.${key}` : key));
  }
  return isDeepStrictEqual(before, after) ? [] : [prefix || '<root>'];
}

/** How a gateway that watches its config takes the change from `before` to `after`. */
export function reloadKindOf(before: Record<string, unknown>, after: Record<string, unknown>): ReloadKind {
  return changedPaths(before, after).some(restartsGateway) ? 'restart' : 'hot-reload';
}

/**
 * Whether an agent's image runs the OpenClaw whose rules these are (the process driver's image is
 * the path of its gateway's entry): only its gateway watches its config file. Any other image (the
 * minimal stand-in, an image of another version) is rebuilt to take a change.
 */
export function watchesItsConfig(image: string | null): boolean {
  if (!image) return false;
  if (image.startsWith('/')) return image.endsWith(`openclaw-${OPENCLAW_VERSION}/node_modules/openclaw/openclaw.mjs`);
  const [name = '', tag = ''] = image.split('@')[0]!.split(/:(?=[^/]*$)/);
  return /(^|\/)(agentyard-)?openclaw$/.test(name) && tag === OPENCLAW_VERSION;
}
