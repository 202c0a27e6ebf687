// `npm run env-docs`: every environment variable of every process, with its default and meaning,
// read from the config schemas themselves (the README's table is this output).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { baseConfigSchema, repoRoot, SERVICE_NAMES, SERVICE_PORTS } from '@agentyard/config';

interface Setting { type?: string; default?: unknown; description?: string; secret?: boolean; anyOf?: { const?: unknown }[] }

function kind(schema: Setting): string {
  if (schema.anyOf) return schema.anyOf.map((s) => JSON.stringify(s.const)).join(' \\| ');
  return schema.type ?? 'string';
}

function row(name: string, schema: Setting, where: string): string {
  const optional = (schema as { '~optional'?: boolean })['~optional'] === true;
  const fallback = schema.secret ? (optional ? 'unset' : 'required (generated in development)') : schema.default !== undefined ? `\`${String(schema.default)}\`` : 'unset';
  return `| \`${name}\` | ${where} | ${kind(schema)} | ${fallback} | ${(schema.description ?? '').replace(/\|/g, '\\|')} |`;
}

const lines = ['| variable | read by | type | default | meaning |', '|---|---|---|---|---|'];
for (const [name, schema] of Object.entries(baseConfigSchema)) lines.push(row(name, schema as Setting, 'every process'));
for (const name of SERVICE_NAMES.map((s) => s as string).concat('edge')) {
  const file = join(repoRoot, 'services', name, 'src', 'config.ts');
  if (!existsSync(file)) continue;
  const module = await import(file) as Record<string, unknown>;
  for (const exported of Object.values(module)) {
    if (!exported || typeof exported !== 'object' || Array.isArray(exported)) continue;
    const entries = Object.entries(exported as Record<string, unknown>);
    if (entries.length === 0 || !entries.every(([key, value]) => /^[A-Z][A-Z0-9_]*$/.test(key) && value && typeof value === 'object')) continue;
    for (const [key, schema] of entries) if (!(key in baseConfigSchema)) lines.push(row(key, schema as Setting, name));
  }
}
lines.push(`| \`<SERVICE>_HOST\`, \`<SERVICE>_PORT\` | that service | string, integer | \`127.0.0.1\`, ${Object.entries(SERVICE_PORTS).map(([n, p]) => `${n} ${p}`).join(', ')} | where each service listens (SERVICE is AUTH, AGENTS, AI, SCHEDULER, BRIDGE, TRADER) |`);
lines.push('| `<SERVICE>_URL` | the edge, other services | string | `http://<SERVICE>_HOST:<SERVICE>_PORT` | where a service is reached (docker-compose sets these) |');
lines.push('| `DATABASE_ADMIN_URL` | npm start, npm test, migrate | string | `postgres://postgres@127.0.0.1:5432/postgres` | superuser URL used to create roles and databases |');
lines.push('| `MAILBOX_SMTP_PORT`, `MAILBOX_WEB_PORT` | npm start | integer | `1025`, `1080` | the development mailbox (SMTP and its web inbox) `npm start` runs when `SMTP_URL` is unset |');
lines.push('| `DATABASE_NAME` | npm start, migrate | string | `agentyard` | the development database |');
lines.push('| `OWNER_DB_PASSWORD`, `APP_DB_PASSWORD`, `SYSTEM_DB_PASSWORD` | migrate | string | unset | role passwords where the server does not trust local connections |');
console.log(lines.join('\n'));
