import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from './paths.ts';

/** Git-ignored file holding the development secrets `npm start` generated once. */
export const DEV_SECRETS_FILE = join(repoRoot, '.agentyard', 'secrets.env');

/** Generators of every secret a platform needs, in the formats the config schemas read. */
export const PLATFORM_SECRETS: Record<string, () => string> = {
  IDENTITY_SECRET: () => randomBytes(32).toString('base64url'),
  SESSION_SECRET: () => randomBytes(32).toString('base64url'),
  INTERNAL_API_KEY: () => randomBytes(32).toString('base64url'),
  ENCRYPTION_KEYS: () => `k1:${randomBytes(32).toString('base64')}`,
  EGRESS_GRANT_KEY: () => randomBytes(32).toString('base64url'),
};
const DEV_SECRETS = PLATFORM_SECRETS;

/** A database password: URL-safe, so it goes into a connection URL as it is. */
const dbPassword = () => randomBytes(24).toString('hex');

/** Everything a production deployment (docker-compose.yml) needs: the platform's secrets, the database and Redis passwords. */
export function productionSecrets(): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(PLATFORM_SECRETS).map(([key, make]) => [key, make()])),
    POSTGRES_PASSWORD: dbPassword(),
    OWNER_DB_PASSWORD: dbPassword(),
    APP_DB_PASSWORD: dbPassword(),
    SYSTEM_DB_PASSWORD: dbPassword(),
    // URL-safe too: it goes into every REDIS_URL (redis://:<password>@redis:6379).
    REDIS_PASSWORD: dbPassword(),
  };
}

/** Writes any missing development secret to DEV_SECRETS_FILE (mode 0600); keeps existing ones. */
export function ensureDevSecrets(file = DEV_SECRETS_FILE): Record<string, string> {
  const existing = existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {};
  const missing = Object.keys(DEV_SECRETS).filter((key) => !existing[key]);
  if (missing.length > 0) {
    for (const key of missing) existing[key] = DEV_SECRETS[key]!();
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      Object.entries(existing)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
      { mode: 0o600 },
    );
  }
  return existing;
}

/** Minimal dotenv: KEY=VALUE lines, # comments, optional surrounding quotes. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    let value = line.slice(eq + 1).trim();
    if (/^(['"]).*\1$/.test(value)) value = value.slice(1, -1);
    out[line.slice(0, eq).trim()] = value;
  }
  return out;
}
