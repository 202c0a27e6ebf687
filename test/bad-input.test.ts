import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { TSchema } from 'typebox';
import { repoRoot, SERVICE_NAMES, type ServiceName } from '@agentyard/config';
import { catalog, type Method, type RouteSpec, type Surface } from '@agentyard/proto-schemas';
import { privateDatabase, startPlatform, uniqueEmail } from '@agentyard/testing';
import { SCOPES } from '../services/edge/src/rate-limits.ts';

// Every route of the catalog, through the real edge and services, with hostile input: each answer
// must be a 4xx with {error}, and the database must be exactly as it was.
t.setTimeout(600_000);
// BAD_INPUT_SERVICES=auth,bridge narrows a run to some services while others are being written.
const only = process.env.BAD_INPUT_SERVICES?.split(',');
const running = SERVICE_NAMES.filter((name) => existsSync(join(repoRoot, 'services', name, 'src', 'main.ts')) && (!only || only.includes(name)));
const db = await privateDatabase(t);
const admin = uniqueEmail('badinput-admin');
const platform = await startPlatform(running as ServiceName[], {
  ...db.urls,
  ADMIN_EMAILS: admin,
  RATE_LIMITS: SCOPES.map((scope) => `${scope.name}=1000000`).join(','),
});
t.teardown(() => platform.stop());

const post = (url: string, body: object) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
await post(`${platform.webUrl}/api/register`, { email: admin, password: 'bad input admin' });
// Admin rights need a verified address outside development (the mail round trip is auth's own test).
await sql`update users set email_verified_at = now() where lower(email) = lower(${admin})`.execute(db.system);
const login = await post(`${platform.webUrl}/api/auth/login`, { email: admin, password: 'bad input admin' });
const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
const userId = (await login.json()).user.id as string;

async function snapshot(): Promise<Record<string, string>> {
  const tables = (await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' and tablename not like 'kysely_%' order by 1`.execute(db.system)).rows;
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await sql<{ digest: string | null }>`select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as digest from ${sql.table(name)} x`.execute(db.system);
    out[name] = rows[0]!.digest ?? '';
  }
  return out;
}

interface Attempt { name: string; body?: string; query?: string; params?: string; contentType?: string }

const WRONG_TYPE: Record<string, unknown> = { string: 12345, number: 'not a number', integer: 1.5, boolean: 'yes', array: { not: 'an array' }, object: 'not an object' };

function typeOf(schema: TSchema): string | undefined {
  const s = schema as { type?: string | string[]; anyOf?: TSchema[] };
  if (typeof s.type === 'string') return s.type;
  return undefined;
}

/** A plain value of the schema's shape (not necessarily valid: formats and patterns are ignored). */
function sampleOf(schema: TSchema): unknown {
  const s = schema as { type?: string; const?: unknown; enum?: unknown[]; default?: unknown; anyOf?: TSchema[]; properties?: Record<string, TSchema>; required?: string[] };
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.anyOf) return sampleOf(s.anyOf[0]!);
  switch (s.type) {
    case 'object': return Object.fromEntries((s.required ?? []).map((key) => [key, sampleOf(s.properties![key]!)]));
    case 'array': return [];
    case 'string': return 'x';
    case 'number': case 'integer': return 1;
    case 'boolean': return true;
    default: return null;
  }
}

/** Hostile variations of a route's input, built from its schema. */
function attempts(spec: RouteSpec): Attempt[] {
  const out: Attempt[] = [];
  const body = spec.schema.body as (TSchema & { properties?: Record<string, TSchema>; additionalProperties?: boolean; required?: string[] }) | undefined;
  if (body) {
    out.push({ name: 'malformed JSON', body: '{"a": ' });
    out.push({ name: 'a JSON array', body: '[1, 2]' });
    out.push({ name: 'a JSON string', body: '"text"' });
    out.push({ name: 'not JSON at all', body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' });
    if (body.required?.length) out.push({ name: 'missing required fields', body: '{}' });
    const base = sampleOf(body) as Record<string, unknown>;
    if (body.additionalProperties === false) out.push({ name: 'an extra field', body: JSON.stringify({ ...base, unexpectedField: 'x' }) });
    for (const [key, property] of Object.entries(body.properties ?? {})) {
      const type = typeOf(property);
      if (type && type in WRONG_TYPE) out.push({ name: `${key} of the wrong type`, body: JSON.stringify({ ...base, [key]: WRONG_TYPE[type] }) });
      if (type === 'string') out.push({ name: `${key} with a NUL character`, body: JSON.stringify({ ...base, [key]: 'a\u0000b' }) });
    }
  }
  const query = spec.schema.querystring as { properties?: Record<string, TSchema> } | undefined;
  for (const [key, property] of Object.entries(query?.properties ?? {})) {
    const type = typeOf(property);
    if (type === 'integer' || type === 'number') out.push({ name: `query ${key} not a number`, query: `${key}=abc` });
  }
  if (spec.url.includes(':')) out.push({ name: 'a malformed path id', params: 'not-a-valid-id%00' });
  return out;
}

function urlFor(spec: RouteSpec, surface: Surface, attempt: Attempt): string {
  const base = surface === 'web' ? platform.webUrl : platform.backendUrl;
  const path = spec.url.replace(/:[A-Za-z0-9_]+/g, attempt.params ?? '00000000-0000-4000-8000-000000000000').replace(/\*$/, 'x');
  return `${base}${path}${attempt.query ? `?${attempt.query}` : ''}`;
}

function callerHeaders(surface: Surface): Record<string, string> {
  return surface === 'web'
    ? { cookie }
    : { authorization: `Bearer ${process.env.INTERNAL_API_KEY}`, 'x-user-id': userId, 'x-user-email': admin };
}

const routes = catalog.filter((spec) => running.includes(spec.service as never) && !spec.websocket);
const before = await snapshot();

for (const spec of routes) {
  for (const surface of spec.surfaces) {
    for (const method of (Array.isArray(spec.method) ? spec.method : [spec.method]) as Method[]) {
      const cases = attempts(spec).filter((a) => a.body === undefined || method !== 'GET');
      if (cases.length === 0) continue;
      t.test(`${surface} ${method} ${spec.url}`, async (t) => {
        for (const attempt of cases) {
          const headers: Record<string, string> = callerHeaders(surface);
          if (attempt.body !== undefined) headers['content-type'] = attempt.contentType ?? 'application/json';
          const res = await fetch(urlFor(spec, surface, attempt), { method, headers, body: attempt.body });
          const text = await res.text();
          // 401/403 would mean the input never reached validation: the caller is a signed-in admin.
          t.ok(res.status >= 400 && res.status < 500 && res.status !== 401 && res.status !== 403, `${attempt.name}: 4xx from validation (got ${res.status} ${text.slice(0, 120)})`);
          let parsed: unknown;
          try { parsed = JSON.parse(text); } catch { parsed = null; }
          t.ok(parsed && typeof (parsed as { error?: unknown }).error === 'string', `${attempt.name}: {error}`);
        }
      });
    }
  }
}

t.test('oversized bodies are refused with 413 on both surfaces', async (t) => {
  const huge = JSON.stringify({ blob: 'x'.repeat(1024 * 1024 + 10) });
  for (const [base, path] of [[platform.webUrl, '/api/register'], [platform.backendUrl, '/api/agents']] as const) {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...callerHeaders(base === platform.webUrl ? 'web' : 'backend') }, body: huge });
    t.equal(res.status, 413, path);
    t.match(await res.json(), { error: String });
  }
});

t.test('nothing in the database changed', async (t) => {
  t.same(await snapshot(), before);
});
