import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, SERVICE_NAMES } from '@agentyard/config';
import { catalog, type Method, type RouteSpec, type ServiceName, type Surface } from '@agentyard/proto-schemas';
import { privateDatabase, startPlatform, uniqueEmail } from '@agentyard/testing';
import { sql } from 'kysely';
import t from 'tap';
import type { TSchema } from 'typebox';
import { compileValidator } from '../libs/http/src/ajv.ts';
import { SCOPES } from '../services/edge/src/plugins/rate-limits.ts';

// Every route of the catalog, through the real edge and services, with hostile input: malformed
// bodies, query strings and path ids, percent-encoded spellings of the path, bad user-context and
// plan headers, oversized headers, and dates at the edges of what JavaScript and PostgreSQL hold.
// Each answer must be a 4xx with {error} from the route's own validation (never the router's 404
// for a route that exists, never a 500), and the database must be exactly as it was.
t.setTimeout(600_000);
// BAD_INPUT_SERVICES=auth,bridge narrows a run to some services while others are being written.
const only = process.env.BAD_INPUT_SERVICES?.split(',');
const running = SERVICE_NAMES.filter(
  (name) => existsSync(join(repoRoot, 'services', name, 'src', 'main.ts')) && (!only || only.includes(name)),
);
const db = await privateDatabase(t);
const admin = uniqueEmail('badinput-admin');
const platform = await startPlatform(running as ServiceName[], {
  ...db.urls,
  ADMIN_EMAILS: admin,
  RATE_LIMITS: SCOPES.map((scope) => `${scope.name}=1000000`).join(','),
});
t.teardown(() => platform.stop());

const post = (url: string, body: object) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
await post(`${platform.webUrl}/api/register`, { email: admin, password: 'bad input admin' });
// Admin rights need a verified address outside development (the mail round trip is auth's own test).
await sql`update users set email_verified_at = now() where lower(email) = lower(${admin})`.execute(db.system);
const login = await post(`${platform.webUrl}/api/auth/login`, { email: admin, password: 'bad input admin' });
const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
const userId = ((await login.json()) as { user: { id: string } }).user.id;

async function snapshot(): Promise<Record<string, string>> {
  const tables = (
    await sql<{
      name: string;
    }>`select tablename as name from pg_tables where schemaname = 'public' and tablename not like 'kysely_%' order by 1`.execute(
      db.system,
    )
  ).rows;
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await sql<{
      digest: string | null;
    }>`select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as digest from ${sql.table(name)} x`.execute(
      db.system,
    );
    out[name] = rows[0]!.digest ?? '';
  }
  return out;
}

type Shape = TSchema & {
  type?: string;
  format?: string;
  pattern?: string;
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  anyOf?: Shape[];
  properties?: Record<string, Shape>;
  required?: string[];
  additionalProperties?: boolean;
  items?: Shape;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
};

/**
 * One hostile request: the parts it changes from the route's valid request. `expect` names what a
 * correct route answers when the rest of the request is valid: the status, and the field or header
 * the error names (so the answer is the validation of what was varied, not some other refusal).
 */
interface Attempt {
  name: string;
  body?: string;
  query?: Record<string, string>;
  /** Path parameters replacing the valid ones; a string replaces every parameter. */
  params?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Sent without the caller's session or key. */
  signedOut?: boolean;
  expect?: { status: number; mentions?: string };
}

const ZERO_UUID = '00000000-0000-4000-8000-000000000000';
const WRONG_TYPE: Record<string, unknown> = {
  string: 12345,
  number: 'not a number',
  integer: 1.5,
  boolean: 'yes',
  array: { not: 'an array' },
  object: 'not an object',
};
/** Dates neither JavaScript nor PostgreSQL (or not both) can hold, and things that are no date at all. */
const EDGE_DATES = [
  '2026-06-30T23:59:60Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '10000-01-01T00:00:00Z',
  '+010000-01-01T00:00:00Z',
  '294277-01-01T00:00:00Z',
  '-271821-04-21T00:00:00Z',
  '2026-02-29T00:00:00Z',
  '2026-01-01T00:00:00+16:00',
  'NaN',
  'Invalid Date',
  '1700000000000',
];
const FORMAT_SAMPLES: Record<string, string> = {
  uuid: ZERO_UUID,
  'date-time': '2026-01-01T00:00:00Z',
  email: 'someone@example.test',
  uri: 'https://example.test/hook',
};
const IN_A_DAY = new Date(Date.now() + 86_400_000).toISOString();
/** Hostile bodies only the service can refuse (the schema admits them), by `METHOD /url`: the fields over the valid body, and the field the 400 names. */
const SERVICE_CHECKED: Record<string, { name: string; fields: Record<string, unknown>; mentions: string }[]> = {
  'POST /api/scheduled-tasks': [
    {
      name: 'an unknown time zone',
      fields: { cronSchedule: '0 9 * * *', timezone: 'Mars/Olympus_Mons' },
      mentions: 'timezone',
    },
    {
      name: 'a UTC offset for a zone',
      fields: { cronSchedule: '0 9 * * *', timezone: 'GMT+5/x' },
      mentions: 'timezone',
    },
    { name: 'runAt in the past', fields: { runAt: '2020-01-01T00:00:00Z' }, mentions: 'runAt' },
    { name: 'runAt beyond a year', fields: { runAt: '2099-01-01T00:00:00Z' }, mentions: 'runAt' },
    { name: 'both cronSchedule and runAt', fields: { cronSchedule: '0 9 * * *', runAt: IN_A_DAY }, mentions: 'runAt' },
    { name: 'neither cronSchedule nor runAt', fields: {}, mentions: 'cronSchedule' },
  ],
  'PUT /api/scheduled-tasks': [
    { name: 'an unknown time zone', fields: { timezone: 'Atlantis/Capital' }, mentions: 'timezone' },
    { name: 'runAt in the past', fields: { runAt: '2020-01-01T00:00:00Z' }, mentions: 'runAt' },
    { name: 'both cronSchedule and runAt', fields: { cronSchedule: '0 9 * * *', runAt: IN_A_DAY }, mentions: 'runAt' },
  ],
};
const PATTERN_CANDIDATES = [
  'x',
  'abc',
  'base',
  'job_1',
  'a1',
  '0',
  '1',
  'general',
  `0x${'0'.repeat(40)}`,
  `0x${'0'.repeat(64)}`,
  '0'.repeat(64),
  'https://example.test/x',
  '1.0',
];

/** Values that are no UUID, sent where one belongs (issue 27: `agentId: "nope"` reached a uuid column and answered 500). */
const NOT_UUIDS = [
  ['not a UUID', 'nope'],
  ['a number', 123],
  ['empty', ''],
] as const;
const isIdName = (key: string) => key === 'id' || /Id$/.test(key) || /_id$/.test(key);
/**
 * Request fields named as ids that are not UUIDs, each with the reason; every other id field of a
 * request must be `format: 'uuid'` (the guard test below), so no other kind of value reaches a uuid column.
 */
const NOT_UUID_IDS: Record<string, string> = {
  '/api/underground/wallets userId': 'ignored: the caller is the signed identity',
  '/api/underground/events userId': 'ignored: the caller is the signed identity',
  '/api/underground/splits userId': 'ignored: the caller is the signed identity',
  '/api/underground/bus/send messageId': "the sender's own message id (text)",
  '/api/webhooks/livestream id': "the provider's event id (text)",
  '/api/webhooks/hosting-status id': "the provider's event id (text)",
  '/api/trader/prompt threadId': "the trading service's thread id",
  '/api/trader/prompt jobId': "the trading service's job id",
  '/api/usage/summary agentId': 'usage rows hold a text agent reference (a uuid, or demo-chat)',
  '/api/usage/by-agent/:agentId agentId': 'usage rows hold a text agent reference (a uuid, or demo-chat)',
  '/api/usage/by-model agentId': 'usage rows hold a text agent reference (a uuid, or demo-chat)',
  '/api/usage/tools agentId': 'usage rows hold a text agent reference (a uuid, or demo-chat)',
  '/api/usage/daily agentId': 'usage rows hold a text agent reference (a uuid, or demo-chat)',
  '/api/config backupId': 'config_backups.id is text',
  '/api/agents/:id/config/restore backupId': 'agent_config_backups.id is text (acb_…), as /api/config backups are',
  '/api/devices deviceId': "the gateway's own device id (devices.id is text)",
  '/api/heartbeat agentId': "an agent row id or the user's runtime instance id (heartbeats.agent_ref is text)",
  '/api/heartbeat/runs agentId': "an agent row id or the user's runtime instance id (heartbeat_runs.agent_ref is text)",
  '/api/checkout/verify session_id': "the billing provider's checkout session id",
  '/api/billing/local-checkout/:id id': "the local billing provider's checkout session id",
};

/** The id fields of an object schema (top level) and whether each is a UUID. */
function idFields(schema: Shape | undefined): { key: string; uuid: boolean }[] {
  return Object.entries(schema?.properties ?? {})
    .filter(([key]) => isIdName(key))
    .map(([key, property]) => ({
      key,
      uuid: (property.anyOf ?? [property]).some((option) => option.format === 'uuid'),
    }));
}

/** The id fields of a route's part that must hold a UUID: declared so, or not listed as another kind (then the guard below fails too). */
const uuidIdsOf = (spec: RouteSpec, schema: TSchema | undefined) =>
  idFields(schema as Shape | undefined).filter((f) => f.uuid || !NOT_UUID_IDS[`${spec.url} ${f.key}`]);

function typeOf(schema: Shape): string | undefined {
  return typeof schema.type === 'string' ? schema.type : undefined;
}

/** A value the schema accepts, where one can be made from it (formats, patterns, bounds); checked by `isValid`. */
function validSample(schema: Shape): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return validSample(schema.anyOf.find((s) => s.type !== 'null') ?? schema.anyOf[0]!);
  switch (schema.type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((key) => [key, validSample(schema.properties![key]!)]));
    case 'array':
      return Array.from(
        { length: Math.max(schema.minItems ?? 0, (schema as { maxItems?: number }).maxItems === 0 ? 0 : 1) },
        () => validSample(schema.items ?? ({} as Shape)),
      );
    case 'string': {
      if (schema.format && FORMAT_SAMPLES[schema.format]) return FORMAT_SAMPLES[schema.format];
      if (schema.pattern) {
        const pattern = new RegExp(schema.pattern, 'u');
        const fit = PATTERN_CANDIDATES.find(
          (c) => pattern.test(c) && c.length >= (schema.minLength ?? 0) && c.length <= (schema.maxLength ?? Infinity),
        );
        if (fit) return fit;
      }
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    }
    case 'number':
    case 'integer':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return true;
    default:
      return null;
  }
}

function isValid(schema: TSchema | undefined, value: unknown, httpPart: string): boolean {
  if (!schema) return true;
  return compileValidator({ schema, httpPart })(structuredClone(value)) as boolean;
}

/** Every `date-time` field of an object schema, nested ones as dotted paths (arrays of objects: their first item). */
function dateFields(schema: Shape | undefined, prefix = ''): string[] {
  if (!schema?.properties) return [];
  return Object.entries(schema.properties).flatMap(([key, property]) => {
    const options = property.anyOf ?? [property];
    const path = `${prefix}${key}`;
    return options.flatMap((option) => {
      if (option.format === 'date-time') return [path];
      if (option.type === 'object') return dateFields(option, `${path}.`);
      if (option.type === 'array' && option.items?.type === 'object') return dateFields(option.items, `${path}.0.`);
      return [];
    });
  });
}

/** `value` with `path` (dotted) set to `replacement`, creating what the path needs. */
function withField(value: Record<string, unknown>, path: string, replacement: unknown): Record<string, unknown> {
  const copy = structuredClone(value);
  const keys = path.split('.');
  let at: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1))
    at = (at[key] ??= /^\d+$/.test(keys[keys.indexOf(key) + 1] ?? '') ? [{}] : {}) as Record<string, unknown>;
  at[keys.at(-1)!] = replacement;
  return copy;
}

/** The route's valid request parts, where the schemas allow one; `complete` says whether every part is valid. */
function validRequest(spec: RouteSpec) {
  const paramsSchema = spec.schema.params as Shape | undefined;
  const params = Object.fromEntries(
    [...spec.url.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => [
      name!,
      String(validSample(paramsSchema?.properties?.[name!] ?? ({ type: 'string', format: 'uuid' } as Shape))),
    ]),
  );
  const query = validSample((spec.schema.querystring as Shape | undefined) ?? ({ type: 'object' } as Shape)) as Record<
    string,
    unknown
  >;
  const body = spec.schema.body ? validSample(spec.schema.body as Shape) : undefined;
  const complete =
    isValid(paramsSchema, { ...params, ...(spec.url.endsWith('*') ? { '*': 'x' } : {}) }, 'params') &&
    isValid(spec.schema.querystring, query, 'querystring') &&
    isValid(spec.schema.body, body, 'body');
  return { params, query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])), body, complete };
}

const plainUser = 'badinput-plain@example.test';

/** Hostile variations of a route's input, built from its schemas. */
function attempts(spec: RouteSpec, surface: Surface, valid: ReturnType<typeof validRequest>): Attempt[] {
  const out: Attempt[] = [];
  // What a correct route answers for an attempt whose only fault is `field`: 400 naming it, when the rest is valid.
  const naming = (mentions: string) => (valid.complete ? { expect: { status: 400, mentions } } : {});
  const body = spec.schema.body as Shape | undefined;
  if (body) {
    out.push({ name: 'malformed JSON', body: '{"a": ' });
    out.push({ name: 'a JSON array', body: '[1, 2]' });
    out.push({ name: 'a JSON string', body: '"text"' });
    out.push({ name: 'not JSON at all', body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' });
    if (body.required?.length) out.push({ name: 'missing required fields', body: '{}' });
    const base = (valid.body ?? {}) as Record<string, unknown>;
    if (body.additionalProperties === false)
      out.push({ name: 'an extra field', body: JSON.stringify({ ...base, unexpectedField: 'x' }) });
    for (const [key, property] of Object.entries(body.properties ?? {})) {
      const type = typeOf(property);
      if (type && type in WRONG_TYPE)
        out.push({ name: `${key} of the wrong type`, body: JSON.stringify({ ...base, [key]: WRONG_TYPE[type] }) });
      if (type === 'string')
        out.push({ name: `${key} with a NUL character`, body: JSON.stringify({ ...base, [key]: 'a\u0000b' }) });
    }
    for (const { key } of uuidIdsOf(spec, body)) {
      for (const [label, value] of NOT_UUIDS)
        out.push({ name: `body ${key} ${label}`, body: JSON.stringify({ ...base, [key]: value }) });
    }
    for (const field of dateFields(body)) {
      for (const date of EDGE_DATES)
        out.push({
          name: `body ${field} = ${date}`,
          body: JSON.stringify(withField(base, field, date)),
          ...naming(field),
        });
      out.push({
        name: `body ${field} as a number`,
        body: JSON.stringify(withField(base, field, 1_700_000_000_000)),
        ...naming(field),
      });
    }
    for (const hostile of SERVICE_CHECKED[`${spec.method} ${spec.url}`] ?? []) {
      out.push({
        name: hostile.name,
        body: JSON.stringify({ ...base, ...hostile.fields }),
        expect: { status: 400, mentions: hostile.mentions },
      });
    }
  }
  const query = spec.schema.querystring as Shape | undefined;
  for (const [key, property] of Object.entries(query?.properties ?? {})) {
    const type = typeOf(property);
    if (type === 'integer' || type === 'number')
      out.push({ name: `query ${key} not a number`, query: { ...valid.query, [key]: 'abc' } });
  }
  for (const field of dateFields(query)) {
    for (const date of EDGE_DATES)
      out.push({ name: `query ${field} = ${date}`, query: { ...valid.query, [field]: date }, ...naming(field) });
  }
  for (const { key } of uuidIdsOf(spec, query)) {
    for (const [label, value] of NOT_UUIDS)
      out.push({ name: `query ${key} ${label}`, query: { ...valid.query, [key]: String(value) } });
  }
  if (spec.url.includes(':')) out.push({ name: 'a malformed path id', params: 'not-a-valid-id%00' });
  if (uuidIdsOf(spec, spec.schema.params).length) {
    // An empty segment would be another url: only the values a path can carry.
    for (const [label, value] of NOT_UUIDS.filter(([, v]) => v !== ''))
      out.push({ name: `path id ${label}`, params: String(value) });
  }
  // The user context every keyed backend call carries into the caller's identity, and the plan
  // headers a route declares; the web surface never carries them (the edge drops them).
  const keyed = surface === 'backend' && spec.backendKey !== false;
  const declared = surface === 'backend' ? ((spec.schema.headers as Shape | undefined)?.properties ?? {}) : {};
  const headers: Record<string, Shape | undefined> = keyed
    ? { 'x-user-id': undefined, 'x-user-email': undefined, ...declared }
    : declared;
  if ('x-user-id' in headers) {
    // A user id is a UUID, except where a route declares its own kind (the AI routes bill a caller's own reference).
    const uuidOnly = !headers['x-user-id'] || headers['x-user-id'].format === 'uuid';
    for (const [label, value] of [
      ['not a UUID', 'nope'],
      ['empty', ''],
      ['huge', 'a'.repeat(8000)],
      ['a UUID with a suffix', `${userId}x`],
    ] as const) {
      if (!uuidOnly && label !== 'empty' && label !== 'huge') continue;
      out.push({ name: `x-user-id ${label}`, headers: { 'x-user-id': value }, ...naming('x-user-id') });
    }
  }
  if ('x-user-email' in headers) {
    for (const [label, value] of [
      ['malformed', 'not-an-email'],
      ['empty', ''],
      ['huge', `${'a'.repeat(8000)}@example.test`],
      ['two addresses', `${admin}, ${plainUser}`],
    ] as const) {
      out.push({ name: `x-user-email ${label}`, headers: { 'x-user-email': value }, ...naming('x-user-email') });
    }
  }
  if ('x-user-plan' in headers) {
    // A caller who is no admin: an admin's email would let any plan through.
    // Plans are the service's to check (402); a body the service refuses first is a 4xx all the same.
    out.push({
      name: 'x-user-plan unknown',
      headers: { 'x-user-email': plainUser, 'x-user-plan': 'platinum', 'x-stripe-subscription-id': 'sub_123' },
    });
    out.push({
      name: 'x-user-plan free',
      headers: { 'x-user-email': plainUser, 'x-user-plan': 'free', 'x-stripe-subscription-id': 'sub_123' },
    });
    out.push({
      name: 'x-user-plan oversized',
      headers: { 'x-user-email': plainUser, 'x-user-plan': 'solo'.repeat(1000) },
      ...naming('x-user-plan'),
    });
  }
  if ('x-stripe-subscription-id' in headers) {
    out.push({
      name: 'x-stripe-subscription-id unknown',
      headers: { 'x-user-email': plainUser, 'x-user-plan': 'solo', 'x-stripe-subscription-id': 'sub_nobody' },
    });
    out.push({
      name: 'x-stripe-subscription-id oversized',
      headers: { 'x-user-email': plainUser, 'x-user-plan': 'solo', 'x-stripe-subscription-id': 's'.repeat(4000) },
      ...naming('x-stripe-subscription-id'),
    });
  }
  // Larger than any server takes (Node's limit is 16 KB of headers): refused before routing.
  out.push({ name: 'an oversized header', headers: { 'x-padding': 'p'.repeat(20_000) }, expect: { status: 431 } });
  // Signed out, a private route answers 401 itself: on an encoded spelling too (the router's 404 would mean it was never reached).
  if (surface === 'web' && spec.auth !== 'none')
    out.push({ name: 'signed out', signedOut: true, expect: { status: 401 } });
  return out;
}

/** The path with one letter of its static part percent-encoded (`/api/agent%73`): the router decodes it to the same route. */
function encodedSpelling(path: string): string {
  const segments = path.split('/');
  const index = segments.findLastIndex((segment, i) => i > 1 && /^[a-z-]+$/i.test(segment) && /[a-z]/i.test(segment));
  const at = index === -1 ? 1 : index;
  const segment = segments[at]!;
  const letter = segment.search(/[a-z]/i);
  segments[at] =
    `${segment.slice(0, letter)}%${segment.charCodeAt(letter).toString(16).toUpperCase()}${segment.slice(letter + 1)}`;
  return segments.join('/');
}

function pathFor(spec: RouteSpec, valid: ReturnType<typeof validRequest>, attempt: Attempt): string {
  return spec.url
    .replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => attempt.params ?? encodeURIComponent(valid.params[name]!))
    .replace(/\*$/, 'x');
}

function callerHeaders(surface: Surface): Record<string, string> {
  return surface === 'web'
    ? { cookie }
    : { authorization: `Bearer ${process.env.INTERNAL_API_KEY}`, 'x-user-id': userId, 'x-user-email': admin };
}

interface Answer {
  status: number;
  text: string;
  error: unknown;
}

async function send(
  surface: Surface,
  method: Method,
  path: string,
  attempt: Attempt,
  valid: ReturnType<typeof validRequest>,
): Promise<Answer> {
  const base = surface === 'web' ? platform.webUrl : platform.backendUrl;
  const query = new URLSearchParams(attempt.query ?? valid.query).toString();
  const headers: Record<string, string> = { ...(attempt.signedOut ? {} : callerHeaders(surface)), ...attempt.headers };
  let body: string | undefined;
  if (method !== 'GET') {
    body = attempt.body ?? (valid.body === undefined ? undefined : JSON.stringify(valid.body));
    if (body !== undefined) headers['content-type'] = attempt.contentType ?? 'application/json';
  }
  const res = await fetch(`${base}${path}${query ? `?${query}` : ''}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: res.status, text, error: (parsed as { error?: unknown } | null)?.error };
}

/** Runs `work` over `items`, `width` at a time. */
async function inTurn<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

const routes = catalog.filter((spec) => running.includes(spec.service as never));
const before = await snapshot();

for (const spec of routes) {
  for (const surface of spec.surfaces) {
    for (const method of (Array.isArray(spec.method) ? spec.method : [spec.method]) as Method[]) {
      const valid = validRequest(spec);
      const cases = attempts(spec, surface, valid).filter((a) => a.body === undefined || method !== 'GET');
      t.test(`${surface} ${method} ${spec.url}`, async (t) => {
        await inTurn(
          cases.map((attempt, index) => ({ attempt, index })),
          8,
          async ({ attempt, index }) => {
            const path = pathFor(spec, valid, attempt);
            const plain = await send(surface, method, path, attempt, valid);
            const what = `${attempt.name} (got ${plain.status} ${plain.text.slice(0, 160)})`;
            // 401/403 would mean the input never reached validation: the caller is a signed-in admin.
            if (!attempt.signedOut)
              t.ok(
                plain.status >= 400 && plain.status < 500 && plain.status !== 401 && plain.status !== 403,
                `${what}: a 4xx from validation`,
              );
            t.type(plain.error, 'string', `${attempt.name}: {error}`);
            t.not(
              plain.status === 404 && plain.error === 'Not found',
              true,
              `${what}: answered by the route, not the router`,
            );
            if (attempt.expect) {
              t.equal(plain.status, attempt.expect.status, `${what}: status`);
              if (attempt.expect.mentions)
                t.match(
                  String(plain.error),
                  new RegExp(attempt.expect.mentions.replace(/[.]/g, '\\.'), 'i'),
                  `${what}: the error names ${attempt.expect.mentions}`,
                );
            }
            // The same request on a percent-encoded spelling of the path reaches the same handler and gets the same answer
            // (every third attempt of each route: enough to show the route, not the router, answers; twice the requests otherwise).
            if (plain.status === 431 || (index % 3 !== 0 && !attempt.signedOut)) return;
            const encoded = await send(surface, method, encodedSpelling(path), attempt, valid);
            t.same(
              { status: encoded.status, error: encoded.error },
              { status: plain.status, error: plain.error },
              `${attempt.name} on ${encodedSpelling(path)}: answered as the plain path`,
            );
          },
        );
      });
    }
  }
}

t.test('oversized bodies are refused with 413 on both surfaces', async (t) => {
  const huge = JSON.stringify({ blob: 'x'.repeat(1024 * 1024 + 10) });
  for (const [base, path] of [
    [platform.webUrl, '/api/register'],
    [platform.backendUrl, '/api/agents'],
  ] as const) {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...callerHeaders(base === platform.webUrl ? 'web' : 'backend') },
      body: huge,
    });
    t.equal(res.status, 413, path);
    t.match(await res.json(), { error: String });
  }
});

t.test('the walk reaches the date fields and headers it means to vary', async (t) => {
  // A guard on the walk itself: if schemas stop declaring these, the cases above would silently vanish.
  const bridgeInbox = routes.find((r) => r.url === '/api/bridge/inbox');
  if (bridgeInbox) t.same(dateFields(bridgeInbox.schema.querystring as Shape), ['since']);
  const agentsCreate = routes.find((r) => r.url === '/api/agents' && r.method === 'POST');
  if (agentsCreate)
    t.ok(
      validRequest(agentsCreate).complete,
      'a valid POST /api/agents request can be built, so header faults are what is refused',
    );
  t.ok(
    routes
      .filter((r) => r.surfaces.includes('backend') && r.backendKey !== false)
      .every((r) => 'x-user-id' in ((r.schema.headers as Shape | undefined)?.properties ?? {})),
    'every keyed backend route declares x-user-id',
  );
});

t.test('every id field of a request is a UUID, or says why not', async (t) => {
  // A guard on the walk above: an id that reaches a uuid column must be refused by its schema first.
  for (const spec of catalog) {
    for (const part of ['params', 'querystring', 'body'] as const) {
      for (const { key, uuid } of idFields(spec.schema[part] as Shape | undefined)) {
        if (!uuid)
          t.ok(
            NOT_UUID_IDS[`${spec.url} ${key}`],
            `${spec.url} ${part} ${key}: format uuid, or listed in NOT_UUID_IDS with the reason`,
          );
      }
    }
  }
});

t.test('nothing in the database changed', async (t) => {
  t.same(await snapshot(), before);
});
