import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import t from 'tap';
import {
  catalog,
  namedScopes,
  RATE_LIMIT_SCOPES,
  route,
  type Method,
  type RateLimitScope,
  type RouteSpec,
} from '@agentyard/proto-schemas';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createUserRow, systemDb } from '@agentyard/testing';
import { buildEdge, startEchoService } from './helper.ts';

/** Routes a scope awaits that the catalog does not hold yet, served here so the walk covers their scope too. */
const awaited: RouteSpec[] = RATE_LIMIT_SCOPES.flatMap((scope: RateLimitScope) =>
  (scope.awaitingRoutes ?? [])
    .map((line) => {
      const [method, url] = line.split(' ') as [Method, string];
      return { method, url, scope };
    })
    .filter(({ method, url }) => !catalog.some((spec) => spec.url === url && [spec.method].flat().includes(method)))
    .map(({ method, url, scope }) =>
      route({
        method,
        url,
        service: 'auth',
        surfaces: [scope.surface],
        auth: 'none',
        rateLimit: scope.name as never,
        summary: 'awaited',
        schema: { response: {} },
      }),
    ),
);
const routes = [...catalog, ...awaited];

const isUnder = (url: string, prefix: string) => url === prefix || url.startsWith(`${prefix}/`);

/**
 * A route of the scope's surface on which the scope is the only one named, else one naming it with
 * others (`others`, which the walk sets far above it, so the RateLimit headers describe the scope
 * nearest its limit: this one); one that takes no WebSocket upgrades where there is one (web-control-ui has none).
 */
function routeOf(scope: RateLimitScope): { method: Method; url: string; others: string[] } | undefined {
  const onSurface = routes
    .filter((spec) => spec.surfaces.includes(scope.surface))
    .sort((a, b) => Number(a.websocket ?? false) - Number(b.websocket ?? false));
  const spec = scope.everyUrlUnder
    ? onSurface.find((s) => isUnder(s.url, scope.everyUrlUnder!) && namedScopes(s).length === 0)
    : (onSurface.find((s) => namedScopes(s).length === 1 && namedScopes(s)[0] === scope.name) ??
      onSurface.find((s) => namedScopes(s).includes(scope.name as never)));
  return (
    spec && {
      method: [spec.method].flat()[0]!,
      url: spec.url,
      others: namedScopes(spec).filter((name) => name !== scope.name),
    }
  );
}

/** The ways a client may spell one path that the router still matches to its route. */
function spellings(pattern: string): string[] {
  const segments = pattern
    .split('/')
    .map((segment) => (segment.startsWith(':') ? 'x1' : segment === '*' ? 'x' : segment));
  const plain = segments.join('/');
  const encodeFirst = (index: number) =>
    segments.map((s, i) => (i === index ? `%${s.charCodeAt(0).toString(16)}${s.slice(1)}` : s)).join('/');
  const lastLiteral = pattern.split('/').findLastIndex((s) => s !== '' && !s.startsWith(':') && s !== '*');
  return [
    plain,
    encodeFirst(lastLiteral), // /api/%72egister
    encodeFirst(1), // /%61pi/register
    `${plain}#frag`,
    `${encodeFirst(lastLiteral)}?q=1#frag`,
  ];
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request over a real connection, its target sent exactly as written (inject would normalize it). */
function send(port: number, method: string, target: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method, path: target, headers: { ...headers, 'content-length': '0' }, agent: false },
      (response) => {
        let body = '';
        response
          .setEncoding('utf8')
          .on('data', (chunk: string) => {
            body += chunk;
          })
          .on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    request.on('error', reject).end();
  });
}

const backendKey = { authorization: `Bearer ${process.env.INTERNAL_API_KEY}` };

t.test(
  'for every scope, each spelling of its path and the plain path draw from one counter, all with RateLimit headers',
  async (t) => {
    const upstream = await startEchoService(t, { everyPath: true });
    for (const scope of RATE_LIMIT_SCOPES as readonly RateLimitScope[]) {
      await t.test(scope.name, async (t) => {
        const target = routeOf(scope);
        if (!target) return t.fail(`no route carries ${scope.name}`);
        const targets = spellings(target.url);
        const limit = targets.length;
        const overrides = [`${scope.name}=${limit}`, ...target.others.map((other) => `${other}=1000`)].join(',');
        const edge = await buildEdge(
          t,
          scope.surface,
          upstream,
          { RATE_LIMITS: overrides, QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-${scope.name}` },
          routes,
        );
        await edge.listen({ host: '127.0.0.1', port: 0 });
        const { port } = edge.server.address() as AddressInfo;
        // Agent-key scopes' routes take no internal key; without a key of their own they count by address.
        const headers = scope.surface === 'backend' && scope.per !== 'agent-key' ? backendKey : {};
        for (const [n, path] of targets.entries()) {
          const answer = await send(port, target.method, path, headers);
          t.equal(answer.status, 200, `${target.method} ${path} reaches the route`);
          t.equal(answer.headers['ratelimit-limit'], String(limit), `${path}: the scope's limit`);
          t.equal(answer.headers['ratelimit-remaining'], String(limit - 1 - n), `${path}: counted on the same counter`);
        }
        const refused = await send(port, target.method, targets[0]!, headers);
        t.equal(refused.status, 429, 'the window is spent, whatever the spelling');
        t.same(JSON.parse(refused.body), { error: scope.message });
        t.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After');
      });
    }
  },
);

t.test('urls the router does not match reach no service; on the backend those under /api still count', async (t) => {
  const upstream = await startEchoService(t, { everyPath: true });
  const edge = await buildEdge(
    t,
    'backend',
    upstream,
    { RATE_LIMITS: 'backend-api=6', QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-unmatched` },
    routes,
  );
  await edge.listen({ host: '127.0.0.1', port: 0 });
  const { port } = edge.server.address() as AddressInfo;
  const unmatched = [
    '/api/no-such-route',
    '/%61pi/no-such-route',
    '//api/bridge/health',
    '/api/bridge/health/',
    '/API/bridge/health',
  ];
  for (const [n, path] of unmatched.entries()) {
    const answer = await send(port, 'GET', path, backendKey);
    t.equal(answer.status, 404, `${path} matches no route`);
    t.same(JSON.parse(answer.body), { error: 'Not found' });
    t.equal(answer.headers['ratelimit-remaining'], String(5 - n), `${path} counts against backend-api`);
  }
  t.equal(
    (await send(port, 'GET', '/api/bridge/health', backendKey)).headers['ratelimit-remaining'],
    '0',
    'on the counter of the routes',
  );
  const refused = await send(port, 'GET', '/api/no-such-route', backendKey);
  t.equal(refused.status, 429);
  t.same(JSON.parse(refused.body), { error: 'Too many requests, please slow down.' });
  const outside = await send(port, 'GET', '/v1/no-such-route');
  t.equal(outside.status, 404);
  t.notOk(
    outside.headers['ratelimit-limit'],
    'outside /api nothing counts (agents probing unknown model urls do not spend the bus budget)',
  );
  const health = await send(port, 'GET', '/health');
  t.equal(health.status, 200, "the edge's own routes answer as before");
  t.notOk(health.headers['ratelimit-limit']);
});

t.test("a method no spec of a limited url declares counts against that url's scopes; HEAD counts as GET", async (t) => {
  const upstream = await startEchoService(t, { everyPath: true });
  const edge = await buildEdge(
    t,
    'web',
    upstream,
    {
      RATE_LIMITS: 'web-register=2,web-demo-chat=2',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-methods`,
    },
    routes,
  );
  await edge.listen({ host: '127.0.0.1', port: 0 });
  const { port } = edge.server.address() as AddressInfo;
  t.equal(
    (await send(port, 'DELETE', '/api/register')).headers['ratelimit-remaining'],
    '1',
    'DELETE /api/register counts against web-register',
  );
  t.equal((await send(port, 'POST', '/api/register')).headers['ratelimit-remaining'], '0');
  t.equal((await send(port, 'PUT', '/api/regist%65r')).status, 429);
  const demoInfo = await send(port, 'GET', '/api/demo/chat');
  t.equal(demoInfo.status, 200);
  t.notOk(demoInfo.headers['ratelimit-limit'], 'GET /api/demo/chat has a spec of its own without the demo-chat scope');
  const health = await send(port, 'GET', '/api/health');
  t.equal(health.status, 200);
  t.notOk(health.headers['ratelimit-limit'], 'the web health route stays unlimited');
  t.equal(
    (await send(port, 'HEAD', '/api/instance/x1')).headers['ratelimit-limit'],
    '30',
    'HEAD of a GET route: web-instance',
  );
  const validations = [await send(port, 'POST', '/api/keys/validate'), await send(port, 'POST', '/api/validate-key')];
  t.same(
    validations.map((answer) => answer.headers['ratelimit-remaining']),
    ['29', '28'],
    'the two urls of one key check share a counter',
  );
});

t.test(
  "hosted agents' chat completions are limited per agent key (its SHA-256) once the service accepted it, not per address",
  async (t) => {
    const upstream = await startEchoService(t, { everyPath: true });
    const prefix = `${process.env.QUEUE_PREFIX}-${Date.now()}-agents`;
    const edge = await buildEdge(
      t,
      'backend',
      upstream,
      { RATE_LIMITS: 'backend-agent-chat=2', QUEUE_PREFIX: prefix },
      routes,
    );
    const chat = (key: string, remoteAddress = '10.88.0.2') =>
      edge.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer ${key}` },
        payload: {},
        remoteAddress,
      });
    const one = 'agent-one-ai-key-0123456789';
    const two = 'agent-two-ai-key-0123456789';
    t.equal(
      (await chat(one)).headers['ratelimit-remaining'],
      '1',
      "a key the service has not accepted yet counts against the caller's address",
    );
    t.equal(
      (await chat(one, '10.88.0.3')).headers['ratelimit-remaining'],
      '1',
      'accepted once, the agent counts on its own counter, from any address',
    );
    t.equal(
      (await chat(one)).headers['ratelimit-remaining'],
      '0',
      'the same agent from another address: the same counter',
    );
    const refused = await chat(one);
    t.equal(refused.statusCode, 429);
    t.same(refused.json(), { error: 'AI rate limit exceeded.' });
    t.equal(
      (await chat(two, '10.88.0.4')).headers['ratelimit-remaining'],
      '1',
      "another agent's first call: its address's counter",
    );
    const other = await chat(two);
    t.equal(other.statusCode, 200, 'another agent behind the same address is not held back');
    t.equal(other.headers['ratelimit-remaining'], '1');
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    t.teardown(() => redis.disconnect());
    const keys = await redis.keys(`${prefix}:ratelimit:*`);
    const sha = (key: string) => createHash('sha256').update(key).digest('hex');
    t.same(
      keys.sort(),
      [
        `${prefix}:ratelimit:backend-agent-chat:10.88.0.2`,
        `${prefix}:ratelimit:backend-agent-chat:10.88.0.4`,
        `${prefix}:ratelimit:backend-agent-chat:agent:${sha(one)}`,
        `${prefix}:ratelimit:backend-agent-chat:agent:${sha(two)}`,
      ].sort(),
      "counters named by the address or the key's hash",
    );
    t.notOk(
      keys.some((key) => key.includes(one) || key.includes(two)),
      'never the key itself',
    );
    const keyless = await edge.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      payload: {},
      remoteAddress: '10.88.0.2',
    });
    t.equal(keyless.headers['ratelimit-remaining'], '0', 'a caller without a key is counted by its address');
  },
);

t.test(
  'keys the service refuses buy no fresh counters: every unknown key from one address draws on that address',
  async (t) => {
    const refusing = http.createServer((_request, response) =>
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Invalid AI key"}'),
    );
    refusing.listen(0, '127.0.0.1');
    await once(refusing, 'listening');
    t.teardown(() => refusing.close());
    const upstream = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
    const edge = await buildEdge(
      t,
      'backend',
      upstream,
      {
        RATE_LIMITS: 'backend-agent-chat=3,backend-agent-models=3',
        QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${Date.now()}-random-keys`,
      },
      routes,
    );
    for (const url of ['/v1/chat/completions', '/v1/models']) {
      const method = url === '/v1/models' ? 'GET' : 'POST';
      const statuses: number[] = [];
      for (let n = 0; n < 4; n++) {
        const answer = await edge.inject({
          method,
          url,
          headers: { authorization: `Bearer random-key-${n}-${Math.random()}` },
          remoteAddress: '10.88.0.9',
          ...(method === 'POST' ? { payload: {} } : {}),
        });
        statuses.push(answer.statusCode);
      }
      t.same(
        statuses,
        [401, 401, 401, 429],
        `${method} ${url}: a fresh random key each time, and the fourth is refused by the edge`,
      );
      const elsewhere = await edge.inject({
        method,
        url,
        headers: { authorization: 'Bearer yet-another-key' },
        remoteAddress: '10.88.0.10',
        ...(method === 'POST' ? { payload: {} } : {}),
      });
      t.equal(elsewhere.statusCode, 401, 'another address has a counter of its own');
    }
  },
);

t.test(
  'scopes per user count each signed-in user apart, from any address; a caller not signed in by address',
  async (t) => {
    const upstream = await startEchoService(t, { everyPath: true });
    const prefix = `${process.env.QUEUE_PREFIX}-${Date.now()}-users`;
    const edge = await buildEdge(t, 'web', upstream, { RATE_LIMITS: 'web-trader=2', QUEUE_PREFIX: prefix }, routes);
    const [one, two] = [await createUserRow(), await createUserRow()];
    const cookieOf = async (userId: string) => {
      const token = randomToken();
      await systemDb()
        .insertInto('sessions')
        .values({ user_id: userId, token_hash: hashToken(token), expires_at: new Date(Date.now() + 3_600_000) })
        .execute();
      return `agentyard-session=${token}`;
    };
    const [cookieOne, cookieTwo] = [await cookieOf(one.id), await cookieOf(two.id)];
    const balances = (remoteAddress: string, cookie?: string) =>
      edge.inject({ method: 'GET', url: '/api/trader/balances', headers: cookie ? { cookie } : {}, remoteAddress });
    t.equal((await balances('10.1.0.1', cookieOne)).headers['ratelimit-remaining'], '1');
    t.equal(
      (await balances('10.2.0.1', cookieOne)).headers['ratelimit-remaining'],
      '0',
      'the same user from another address: the same counter',
    );
    const refused = await balances('10.3.0.1', cookieOne);
    t.equal(refused.statusCode, 429);
    t.same(refused.json(), { error: 'Too many requests' });
    const other = await balances('10.1.0.1', cookieTwo);
    t.equal(other.statusCode, 200, 'another user behind the same address is not held back');
    t.equal(other.headers['ratelimit-remaining'], '1');
    t.equal((await balances('10.1.0.1')).headers['ratelimit-remaining'], '1', 'a caller not signed in: by address');
    t.equal((await balances('10.1.0.1')).headers['ratelimit-remaining'], '0');
    t.equal((await balances('10.4.0.1')).headers['ratelimit-remaining'], '1', 'another address: another counter');
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    t.teardown(() => redis.disconnect());
    const keys = await redis.keys(`${prefix}:ratelimit:web-trader:*`);
    t.same(
      keys.sort(),
      [
        `${prefix}:ratelimit:web-trader:user:${one.id}`,
        `${prefix}:ratelimit:web-trader:user:${two.id}`,
        `${prefix}:ratelimit:web-trader:10.1.0.1`,
        `${prefix}:ratelimit:web-trader:10.4.0.1`,
      ].sort(),
      'counters named by user id, or address',
    );
  },
);
