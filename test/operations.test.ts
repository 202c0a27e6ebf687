import t from 'tap';
import { startPlatform, uniqueEmail } from '@agentyard/testing';

/** One sample's value from a Prometheus text exposition, by metric name and labels it has. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

// Real processes: auth, its worker and the edge; a long drain so the draining window can be seen.
const platform = await startPlatform(
  ['auth'],
  { RATE_LIMITS: 'web-register=2', AUTH_READINESS_DRAIN_MS: '120000', LOG_LEVEL: 'silent' },
  { workers: true },
);
t.teardown(() => platform.stop());
const ops = (process: string, path: string) => fetch(`${platform.opsUrls[process]}${path}`);
const register = () =>
  fetch(`${platform.webUrl}/api/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: uniqueEmail('ops'), password: 'a long password', name: 'Ops' }),
  });

t.test('every process is live and ready, naming the dependencies it checked', async (t) => {
  t.same(Object.keys(platform.opsUrls).sort(), ['auth', 'auth worker', 'edge']);
  for (const name of Object.keys(platform.opsUrls)) {
    const live = await ops(name, '/livez');
    t.equal(live.status, 200, `${name} live`);
    const ready = await ops(name, '/readyz');
    const body = await ready.json();
    t.equal(ready.status, 200, `${name} ready`);
    t.same(body, { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } }, `${name} checked PostgreSQL and Redis`);
  }
});

t.test("metrics: requests by route pattern, the edge's own time, refusals, queues, process", async (t) => {
  t.equal((await register()).status, 201);
  t.equal((await register()).status, 201);
  t.equal((await register()).status, 429, 'the third registration is over the limit');
  const edge = await (await ops('edge', '/metrics')).text();
  t.ok(sample(edge, 'process_cpu_seconds_total')! > 0, 'process CPU');
  t.ok(sample(edge, 'nodejs_eventloop_lag_seconds') !== undefined, 'event-loop lag');
  t.equal(
    sample(edge, 'http_request_duration_seconds_count', {
      service: 'edge-web',
      method: 'POST',
      route: '/api/register',
      status_code: '201',
    }),
    2,
  );
  t.equal(
    sample(edge, 'http_request_duration_seconds_count', {
      service: 'edge-web',
      method: 'POST',
      route: '/api/register',
      status_code: '429',
    }),
    1,
  );
  t.equal(sample(edge, 'edge_added_duration_seconds_count', { surface: 'edge-web' }), 2, 'the two forwarded requests');
  t.equal(sample(edge, 'rate_limit_refusals_total', { scope: 'web-register' }), 1);
  t.notMatch(edge, /ops-[a-z0-9]+@/, 'no raw URL or body value is a label');

  // The backend surface answers the edge's metrics to a key holder only; the web surface has none.
  t.equal((await fetch(`${platform.backendUrl}/metrics`)).status, 401);
  const keyed = await fetch(`${platform.backendUrl}/metrics`, {
    headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}` },
  });
  t.equal(keyed.status, 200);
  t.match(await keyed.text(), /http_request_duration_seconds_count\{service="edge-web"/);
  // The web surface answers every other GET with the console's page (its own not-found view).
  const onWeb = await fetch(`${platform.webUrl}/metrics`);
  t.notMatch(await onWeb.text(), /http_request_duration_seconds|process_cpu/, 'never on the web surface');
  t.match(onWeb.headers.get('content-type'), /^text\/html/, "the console's page instead");

  const auth = await (await ops('auth', '/metrics')).text();
  t.equal(
    sample(auth, 'http_request_duration_seconds_count', {
      service: 'auth',
      method: 'POST',
      route: '/api/register',
      status_code: '201',
    }),
    2,
  );

  const worker = await (await ops('auth worker', '/metrics')).text();
  t.ok(sample(worker, 'process_resident_memory_bytes')! > 0);
  t.match(worker, /bullmq_jobs\{queue="[a-z-]+",state="waiting"\} \d+/, 'queue counts by state');
});

t.test('SIGTERM: readiness turns 503 first while requests are still served', async (t) => {
  process.kill(platform.pids.auth!, 'SIGTERM');
  // The signal is handled asynchronously: readiness is asked until it changes (it never turns back).
  let ready: Response;
  do ready = await ops('auth', '/readyz');
  while (ready.status === 200);
  t.equal(ready.status, 503);
  t.same(await ready.json(), { status: 'draining' });
  t.equal((await ops('auth', '/livez')).status, 200, 'still live');
  const login = await fetch(`${platform.webUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: uniqueEmail('nobody'), password: 'not a password' }),
  });
  t.equal(login.status, 401, 'the draining service still answers');
});

t.test('readiness names the dependency that does not answer', async (t) => {
  // PostgreSQL on a port nothing listens on: the processes start, readiness says which part is missing.
  const broken = await startPlatform(['trader'], {
    DATABASE_URL: 'postgres://agentyard_app@127.0.0.1:1/agentyard',
    LOG_LEVEL: 'silent',
  });
  t.teardown(() => broken.stop());
  const ready = await fetch(`${broken.opsUrls.edge}/readyz`);
  t.equal(ready.status, 503);
  const body = (await ready.json()) as { status: string; failed: string[]; checks: Record<string, string> };
  t.equal(body.status, 'unavailable');
  t.ok(body.failed.includes('postgres'), 'PostgreSQL named');
  t.ok('redis' in body.checks, 'Redis was asked too');
  t.match(body.checks.postgres, /ECONNREFUSED|connect/);
});
