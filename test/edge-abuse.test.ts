import http from 'node:http';
import t from 'tap';
import { sendRaw, startPlatform, startTrapListener, uniqueEmail } from '@agentyard/testing';

// The real edge in front of the real auth and agents services, with few connections to each service
// for short requests, so streams past that number would starve everyone if they shared them.
const platform = await startPlatform(['auth', 'agents', 'ai'], {
  RATE_LIMITS: 'web-register=1000,web-login=1000,backend-agent-models=3',
  EDGE_SERVICE_CONNECTIONS: '2',
  EDGE_STREAMS_PER_USER: '4',
});
t.teardown(() => platform.stop());
const webPort = Number(new URL(platform.webUrl).port);

/** A signed-in user's session cookie. */
async function signIn(): Promise<string> {
  const email = uniqueEmail('abuse');
  const headers = { 'content-type': 'application/json' };
  const registered = await fetch(`${platform.webUrl}/api/register`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ email, password: 'a long password', name: 'Abuse' }),
  });
  if (registered.status !== 201) throw new Error(`register: ${registered.status}`);
  const login = await fetch(`${platform.webUrl}/api/auth/login`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ email, password: 'a long password' }),
  });
  return login.headers
    .getSetCookie()
    .find((c) => c.startsWith('agentyard-session='))!
    .split(';')[0]!;
}

/** GET `path` on a connection of its own; resolves with the answer's head while its body may stay open. */
function open(
  path: string,
  cookie: string,
): Promise<{ status: number; request: http.ClientRequest; body(): Promise<string> }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port: webPort, path, agent: false, timeout: 30_000, headers: { cookie } },
      (response) => {
        let text = '';
        const ended = new Promise<string>((done) =>
          response
            .setEncoding('utf8')
            .on('data', (c: string) => (text += c))
            .on('end', () => done(text)),
        );
        resolve({ status: response.statusCode!, request, body: () => ended });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer to ${path}`))).on('error', reject);
  });
}

t.test(
  "one user's open event streams leave every other user's requests answered; one more than the cap is 429",
  async (t) => {
    const [holder, other] = await Promise.all([signIn(), signIn()]);
    const streams = await Promise.all(
      ['/api/events', '/api/events', '/api/events', '/api/logs/00000000-0000-4000-8000-00000000000b/stream'].map(
        (path) => open(path, holder),
      ),
    );
    t.teardown(() => {
      for (const stream of streams) stream.request.destroy();
    });
    t.same(
      streams.map((stream) => stream.status),
      [200, 200, 200, 404],
      'three event streams held open (more than the 2 connections of short requests); the log stream of no agent of theirs answers 404',
    );
    const logs = streams.pop()!;
    await logs.body();
    const held = await open('/api/logs/00000000-0000-4000-8000-00000000000b/stream', holder);
    t.equal(held.status, 404, 'a refused stream gave its slot back');
    await held.body();
    streams.push(await open('/api/events', holder));
    t.equal(streams.at(-1)!.status, 200, 'the fourth stream');

    const agents = await open('/api/agents', other);
    t.equal(agents.status, 200, "another user's /api/agents answers");
    t.match(JSON.parse(await agents.body()), { agents: [] });
    const again = await open('/api/agents', holder);
    t.equal(again.status, 200, "and the streams' holder's own short requests too");
    await again.body();

    const fifth = await open('/api/events', holder);
    t.equal(fifth.status, 429, 'past EDGE_STREAMS_PER_USER');
    t.same(JSON.parse(await fifth.body()), { error: 'Too many open streams', code: 'TOO_MANY_STREAMS', limit: 4 });
    const theirs = await open('/api/events', other);
    t.equal(theirs.status, 200, 'the other user still opens a stream of their own');
    theirs.request.destroy();
  },
);

t.test(
  'a request target naming another host is refused with 400 on every listener; that host hears nothing',
  async (t) => {
    const trap = await startTrapListener();
    t.teardown(() => trap.close());
    const cookie = await signIn();
    const elsewhere = `http://127.0.0.1:${trap.port}`;
    const upgrade = [
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    ];
    const listeners = [
      {
        url: platform.webUrl,
        head: [`Cookie: ${cookie}`],
        paths: ['/api/control-ui/00000000-0000-4000-8000-00000000000c/', '/api/agents'],
      },
      {
        url: platform.backendUrl,
        head: [`Authorization: Bearer ${platform.env.INTERNAL_API_KEY}`],
        paths: ['/api/runtime/proxy/00000000-0000-4000-8000-00000000000c/x', '/api/agents'],
      },
      ...(platform.agentUrl
        ? [{ url: platform.agentUrl, head: ['Authorization: Bearer an-agent-key'], paths: ['/v1/models'] }]
        : []),
    ];
    for (const { url, head, paths } of listeners) {
      const { hostname, port } = new URL(url);
      for (const path of paths)
        for (const upgrading of [false, true]) {
          const answer = await sendRaw(hostname, Number(port), [
            `GET ${elsewhere}${path} HTTP/1.1`,
            `Host: ${hostname}:${port}`,
            ...head,
            ...(upgrading ? upgrade : []),
          ]);
          t.equal(answer.status, 400, `${url}: GET ${elsewhere}${path}${upgrading ? ' (upgrade)' : ''}`);
          t.same(JSON.parse(answer.body), { error: 'Request target must be a path' });
        }
    }
    t.same(trap.heard, [], 'the other host heard nothing: no identity header, no request');
  },
);

t.test(
  "the agents' listener: no /health of the edge's, and invented keys buy no fresh rate-limit counters",
  async (t) => {
    // Where agents call (the backend surface serves the same routes when no container engine gives this run an agent listener).
    const agentsCall = platform.agentUrl ?? platform.backendUrl;
    if (platform.agentUrl)
      t.equal((await fetch(`${platform.agentUrl}/health`)).status, 404, 'the agent listener has no /health');
    const statuses: number[] = [];
    for (let n = 0; n < 4; n++)
      statuses.push(
        (
          await fetch(`${agentsCall}/v1/models`, {
            headers: { authorization: `Bearer ag_invented_${n}_${Math.random()}` },
          })
        ).status,
      );
    t.same(
      statuses,
      [401, 401, 401, 429],
      'each invented key is refused by the AI service, and the fourth counts against the same address',
    );
  },
);
