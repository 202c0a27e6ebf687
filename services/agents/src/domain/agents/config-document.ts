import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { toolsProfileOf } from './plans.ts';

/**
 * The agent configuration a user may keep, as OpenClaw reads it from `openclaw.json`. OpenClaw's
 * validation is strict (an unknown key stops the gateway), so every object here is closed and a
 * configuration is refused naming the first key OpenClaw would reject. The keys the platform
 * writes itself (tokens, port, hooks) are refused as platform-managed.
 */
const Strings = Type.Array(Type.String({ maxLength: 512 }), { maxItems: 500 });
const Closed = (properties: Record<string, TSchema>) =>
  Type.Object(Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])), {
    additionalProperties: false,
  });
const OneOf = (...values: string[]) => Type.Union(values.map((v) => Type.Literal(v)));
const LogLevel = OneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent');
const Channel = (extra: Record<string, TSchema> = {}) =>
  Closed({ enabled: Type.Boolean(), allowFrom: Strings, ...extra });

const OpenClawConfig = Closed({
  logging: Closed({ level: LogLevel, consoleLevel: LogLevel, file: Type.String({ maxLength: 1024 }) }),
  agents: Closed({
    defaults: Closed({
      model: Type.Union([
        Type.String({ minLength: 1, maxLength: 256 }),
        Closed({ primary: Type.String({ minLength: 1, maxLength: 256 }), fallbacks: Strings }),
      ]),
      workspace: Type.String({ minLength: 1, maxLength: 1024 }),
      timeoutSeconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
      maxConcurrent: Type.Integer({ minimum: 1, maximum: 64 }),
    }),
  }),
  tools: Closed({ profile: OneOf('minimal', 'coding', 'messaging', 'full'), allow: Strings, deny: Strings }),
  gateway: Closed({
    bind: OneOf('loopback', 'lan', 'tailnet', 'auto'),
    auth: Closed({ mode: OneOf('token', 'password') }),
    controlUi: Closed({ enabled: Type.Boolean(), allowedOrigins: Strings }),
  }),
  channels: Closed({
    whatsapp: Channel({ dmPolicy: OneOf('pairing', 'allowlist', 'open', 'disabled') }),
    telegram: Channel({ dmPolicy: OneOf('pairing', 'allowlist', 'open', 'disabled') }),
    discord: Channel(),
    webchat: Closed({ enabled: Type.Boolean() }),
  }),
  session: Closed({
    dmScope: OneOf('main', 'per-peer', 'per-channel-peer', 'per-account-channel-peer'),
    resetTriggers: Strings,
  }),
  skills: Closed({
    install: Closed({ nodeManager: OneOf('npm', 'pnpm', 'yarn', 'bun') }),
    allowBundled: Strings,
    entries: Type.Record(Type.String({ pattern: '^[A-Za-z0-9._-]{1,128}$' }), Closed({ enabled: Type.Boolean() })),
  }),
  messages: Closed({ groupChat: Closed({ mentionPatterns: Strings }) }),
});

/** Keys OpenClaw knows that the platform writes per agent; a user's configuration may not set them. */
const PLATFORM_MANAGED = [
  'hooks',
  'gateway.mode',
  'gateway.port',
  'gateway.auth.token',
  'gateway.auth.password',
  'models',
];

export type AgentConfig = Record<string, unknown>;
export type ConfigCheck = { ok: true } | { ok: false; message: string };

/** The default configuration; `tools.profile` is `coding` from the collective plan up. */
export function defaultAgentConfig(plan: string): AgentConfig {
  return {
    logging: { level: 'info' },
    agents: { defaults: { model: 'openrouter/moonshotai/kimi-k2.5', workspace: '/home/node/.openclaw/workspace' } },
    tools: { profile: toolsProfileOf(plan) },
    gateway: { bind: 'lan', auth: { mode: 'token' } },
    channels: {
      whatsapp: { allowFrom: [] },
      telegram: { enabled: false },
      discord: { enabled: false },
      webchat: { enabled: true },
    },
    session: { dmScope: 'per-channel-peer', resetTriggers: ['/new', '/reset'] },
    skills: { install: { nodeManager: 'npm' } },
  };
}

const keyOf = (pointer: string) =>
  pointer
    .replace(/^\//, '')
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

/** A section of a configuration: a JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** A clone's configuration: its channels stay off until its owner connects them again (their credentials are the source's, never copied). */
export function withChannelsOff(config: AgentConfig): AgentConfig {
  if (!isObject(config.channels)) return config;
  const channels = Object.fromEntries(
    Object.entries(config.channels).map(([name, channel]) => [
      name,
      isObject(channel) ? { ...channel, enabled: false } : channel,
    ]),
  );
  return { ...config, channels };
}

/** The value at a dotted path of a configuration (undefined when absent). */
export function valueAt(config: AgentConfig, path: string): unknown {
  let node: unknown = config;
  for (const part of path.split('.')) {
    if (!isObject(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

/** Skills a configuration installs: its `skills.entries` not switched off (what plan limits and the dashboard count). */
export function installedSkills(config: AgentConfig): number {
  const entries = valueAt(config, 'skills.entries');
  if (!isObject(entries)) return 0;
  return Object.values(entries).filter((entry) => (entry as { enabled?: unknown } | null)?.enabled !== false).length;
}

/** `over` set on `base`, objects key by key (arrays and values replace). */
export function mergedConfig(base: AgentConfig, over: AgentConfig): AgentConfig {
  const out = { ...base };
  for (const [key, value] of Object.entries(over))
    out[key] = isObject(value) && isObject(out[key]) ? mergedConfig(out[key], value) : value;
  return out;
}

/** A configuration holding only `value` at a dotted path. */
export function configAt(path: string, value: unknown): AgentConfig {
  return path.split('.').reduceRight<unknown>((inner, part) => ({ [part]: inner }), value) as AgentConfig;
}

/** The first key of `config` that the platform writes itself (a configuration may not set it). */
export const managedKeyIn = (config: AgentConfig): string | undefined =>
  PLATFORM_MANAGED.find((path) => valueAt(config, path) !== undefined);

/** Whether OpenClaw would accept `config`; if not, a message naming the offending key. */
export function validateAgentConfig(config: AgentConfig): ConfigCheck {
  const managed = managedKeyIn(config);
  if (managed) return { ok: false, message: `Invalid config: ${managed} is set by the platform` };
  const errors = Value.Errors(OpenClawConfig, config);
  const unknown = errors.find((e) => e.keyword === 'additionalProperties');
  if (unknown) {
    const parent = keyOf(unknown.instancePath);
    const name = (unknown.params as { additionalProperties?: string[] }).additionalProperties?.[0] ?? '';
    return { ok: false, message: `Invalid config: unknown key ${parent ? `${parent}.` : ''}${name}` };
  }
  const first = errors.find((e) => e.keyword !== 'boolean' && e.keyword !== 'anyOf') ?? errors[0];
  if (first) {
    const problem = first.keyword === 'const' ? 'is not a value OpenClaw accepts' : first.message;
    return { ok: false, message: `Invalid config: ${keyOf(first.instancePath) || 'config'} ${problem}` };
  }
  return { ok: true };
}
