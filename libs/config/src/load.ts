import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { baseConfigSchema, isSecret } from './base.ts';
import { DEV_SECRETS_FILE, parseEnvFile } from './dev-secrets.ts';
import { repoRoot } from './paths.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Base = typeof baseConfigSchema;
export type BaseConfig = Static<ReturnType<typeof Type.Object<Base>>>;

interface LoadOptions {
  env?: Record<string, string | undefined>;
  /** Read `.env` and the generated development secrets (off for tests that pass `env`). */
  files?: boolean;
}

function fileEnv(): Record<string, string> {
  const dotenv = join(repoRoot, '.env');
  return {
    ...(existsSync(DEV_SECRETS_FILE) ? parseEnvFile(readFileSync(DEV_SECRETS_FILE, 'utf8')) : {}),
    ...(existsSync(dotenv) ? parseEnvFile(readFileSync(dotenv, 'utf8')) : {}),
  };
}

/**
 * The process configuration: base settings plus `extra`, from the environment (which wins), `.env`
 * and, outside production, the generated development secrets. Throws ConfigError naming every
 * missing or invalid setting; secrets are named, never echoed.
 */
export function loadConfig<P extends TProperties>(
  extra: P,
  options: LoadOptions = {},
): Static<ReturnType<typeof Type.Object<Base & P>>> {
  const properties = { ...baseConfigSchema, ...extra } as Base & P;
  const schema = Type.Object(properties);
  const env = options.env ?? process.env;
  const fromFiles = options.files === false ? {} : fileEnv();
  const production = (env.NODE_ENV ?? fromFiles.NODE_ENV) === 'production';
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(properties)) {
    const value = env[key] ?? (production && isSecret(properties[key] as TSchema) ? undefined : fromFiles[key]);
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const missingSecrets = Object.keys(properties).filter(
    (key) =>
      isSecret(properties[key] as TSchema) &&
      raw[key] === undefined &&
      isRequired(schema as { required?: string[] }, key),
  );
  if (missingSecrets.length > 0) {
    throw new ConfigError(
      production
        ? `Missing required secret(s): ${missingSecrets.join(', ')}. Set them in the environment; production never generates secrets.`
        : `Missing secret(s): ${missingSecrets.join(', ')}. Run \`npm start\` once to generate development secrets into ${DEV_SECRETS_FILE}, or set them in the environment.`,
    );
  }
  const value = Value.Convert(schema, Value.Default(schema, raw));
  const problems = [...Value.Errors(schema, value)].map((e) => {
    const key =
      e.instancePath.replace(/^\//, '') ||
      (e.params as { requiredProperties?: string[] }).requiredProperties?.join(', ') ||
      '(config)';
    return `${key}: ${e.message}`;
  });
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  return value as Static<ReturnType<typeof Type.Object<Base & P>>>;
}

function isRequired(schema: { required?: string[] }, key: string): boolean {
  return (schema.required ?? []).includes(key);
}

/** Admin emails as a lookup set, lower-cased. */
export function adminEmailSet(list: string): Set<string> {
  return new Set(
    list
      .split(',')
      .map((e) => e.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * Whether a listed admin address must be verified to act as admin: everywhere but development,
 * where a fresh `npm start` gets its admin without a mail round trip.
 */
export function adminNeedsVerifiedEmail(nodeEnv: string): boolean {
  return nodeEnv !== 'development';
}

/** A host name or address that only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * A plain (non-secret) setting as loadConfig reads it: the environment, else `.env`. For code that
 * runs before or without a process's typed config (the listeners of libs/http).
 */
export function plainSetting(key: string, env: Record<string, string | undefined> = process.env): string | undefined {
  const value = env[key] || (env === process.env ? fileEnv()[key] : undefined);
  return value || undefined;
}

/**
 * Outside production (NODE_ENV unset is development: admins before verification, the process driver,
 * generated secrets) a listener serves loopback only, unless `exposed` (comma-separated) names it:
 * a deployment that forgot NODE_ENV must not offer development's shortcuts to the network.
 */
export function refuseExposedListeners(
  nodeEnv: string,
  listeners: { name: string; host: string }[],
  exposed: string,
): void {
  if (nodeEnv === 'production') return;
  const allowed = new Set(exposed.split(',').map((name) => name.trim()));
  const refused = listeners.filter(({ name, host }) => host !== '' && !isLoopbackHost(host) && !allowed.has(name));
  if (refused.length === 0) return;
  throw new ConfigError(
    `Refusing to listen on ${refused.map(({ name, host }) => `${host} (${name})`).join(', ')}: NODE_ENV is ${nodeEnv}, not production, so only loopback addresses are served. ` +
      'Set NODE_ENV=production, or name the listener in EDGE_EXPOSED_LISTENERS to serve it anyway.',
  );
}
