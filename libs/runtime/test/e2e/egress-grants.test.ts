import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from '@agentyard/config';
import t, { type Test } from 'tap';
import { grantedProxyUrl, signEgressGrant } from '../../src/index.ts';

// Issue 29: an agent's confined egress reaches the hosts its connected channels need, and nothing
// more. The real egress proxy (infra/egress-proxy/egress-proxy.ts) as a process, a Telegram-like Bot
// API server on this machine, and Node's own HTTP clients reading the proxy URL as agents get it.
t.setTimeout(120_000);

const key = randomBytes(32).toString('base64url');
/** The Bot API stand-in is reached as 127.0.0.1 (the granted "Telegram host"); `localhost` is another host. */
const TELEGRAM_HOST = '127.0.0.1';
const OTHER_HOST = 'localhost';

/** A Telegram-like Bot API: answers getMe, and records each request's headers. */
async function botApi(t: Test): Promise<{ port: number; seen: IncomingHttpHeaders[]; connections: () => number }> {
  const seen: IncomingHttpHeaders[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ok: true, result: { id: 1, is_bot: true, username: 'agentyard_test_bot' } }));
  });
  server.on('connection', () => connections++);
  server.listen(0, TELEGRAM_HOST);
  await once(server, 'listening');
  t.teardown(() =>
    new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
  );
  return { port: (server.address() as AddressInfo).port, seen, connections: () => connections };
}

/** A free port on loopback for the proxy to listen on (it takes no port 0). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The egress proxy with grants, allowed to dial this machine on `targetPort`; answers once it listens. */
async function egressProxy(
  t: Test,
  targetPort: number,
  allowedHosts = '',
): Promise<{ url: string; refusals: Record<string, unknown>[] }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(repoRoot, 'infra/egress-proxy/egress-proxy.ts')], {
    env: {
      PATH: process.env.PATH,
      EGRESS_LISTEN_HOST: '127.0.0.1',
      EGRESS_PROXY_PORT: String(port),
      EGRESS_ALLOWED_PORTS: String(targetPort),
      EGRESS_ALLOWED_ADDRESSES: '127.0.0.1,::1',
      EGRESS_GRANT_KEY: key,
      EGRESS_ALLOWED_HOSTS: allowedHosts,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  const refusals: Record<string, unknown>[] = [];
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the egress proxy exited (${code})`)));
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (typeof entry.msg === 'string' && entry.msg.startsWith('egress proxy on')) resolve();
      if (entry.refused) refusals.push(entry);
    });
  });
  return { url: `http://127.0.0.1:${port}`, refusals };
}

const basic = (agentId: string, grant: string) => `Basic ${Buffer.from(`${agentId}:${grant}`).toString('base64')}`;

/** A plain-HTTP request through the proxy (absolute URL): its status. */
function viaProxy(proxyUrl: string, target: string, authorization?: string): Promise<number> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: proxy.hostname,
        port: proxy.port,
        path: target,
        headers: { host: new URL(target).host, ...(authorization ? { 'proxy-authorization': authorization } : {}) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.once('error', reject).end();
  });
}

/** CONNECT through the proxy (as for TLS): the status, and on 200 a Bot API call through the tunnel. */
function tunnelThrough(
  proxyUrl: string,
  hostPort: string,
  authorization?: string,
): Promise<{ status: number; body?: string; challenge?: string }> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = request({
      host: proxy.hostname,
      port: proxy.port,
      method: 'CONNECT',
      path: hostPort,
      headers: authorization ? { 'proxy-authorization': authorization } : {},
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        resolve({ status: res.statusCode!, challenge: res.headers['proxy-authenticate'] });
        return;
      }
      let body = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (body += chunk));
      socket.once('end', () => resolve({ status: 200, body }));
      socket.write(`GET /bot1:token/getMe HTTP/1.1\r\nhost: ${hostPort}\r\nconnection: close\r\n\r\n`);
    });
    req.once('error', reject).end();
  });
}

/**
 * Node run as an agent's gateway is (NODE_USE_ENV_PROXY, HTTP(S)_PROXY): what its fetch of `target`
 * answered. It tunnels http:// too (CONNECT), so a refusal is `failed Proxy response (<status>)`.
 */
async function agentFetch(proxyUrl: string, target: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `fetch(${JSON.stringify(target)}).then(async (r) => console.log(r.status, await r.text()), (e) => console.log('failed', e.cause?.cause?.message ?? e.cause?.code ?? e.name))`,
    ],
    {
      env: { PATH: process.env.PATH, NODE_USE_ENV_PROXY: '1', HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await once(child, 'exit');
  return out.trim();
}

t.test("an agent granted Telegram reaches Telegram's host and no other", async (t) => {
  const api = await botApi(t);
  const proxy = await egressProxy(t, api.port);
  const agentId = randomUUID();
  const grant = signEgressGrant(key, agentId, [TELEGRAM_HOST]);
  const telegram = `${TELEGRAM_HOST}:${api.port}`;

  t.equal(
    await viaProxy(proxy.url, `http://${telegram}/bot1:token/getMe`, basic(agentId, grant)),
    200,
    'HTTP to the granted host',
  );
  t.notOk(api.seen.at(-1)?.['proxy-authorization'], 'the Bot API never sees the grant');
  const tunnelled = await tunnelThrough(proxy.url, telegram, basic(agentId, grant));
  t.equal(tunnelled.status, 200, 'CONNECT to the granted host');
  t.match(tunnelled.body, /"username":"agentyard_test_bot"/, 'and the Bot API answers through the tunnel');

  t.equal(
    await viaProxy(proxy.url, `http://${OTHER_HOST}:${api.port}/`, basic(agentId, grant)),
    403,
    'HTTP to another host: 403',
  );
  t.equal(
    (await tunnelThrough(proxy.url, `${OTHER_HOST}:${api.port}`, basic(agentId, grant))).status,
    403,
    'CONNECT to another host: 403',
  );
  t.match(proxy.refusals.at(-1), { agentId, reason: /not on the allow-list/ }, 'the refusal is logged with the agent');
});

t.test('an agent with no channel reaches no host', async (t) => {
  const api = await botApi(t);
  const proxy = await egressProxy(t, api.port);
  const agentId = randomUUID();
  const grant = signEgressGrant(key, agentId, []);
  const before = api.connections();
  t.equal(await viaProxy(proxy.url, `http://${TELEGRAM_HOST}:${api.port}/`, basic(agentId, grant)), 403);
  t.equal((await tunnelThrough(proxy.url, `${TELEGRAM_HOST}:${api.port}`, basic(agentId, grant))).status, 403);
  t.equal((await tunnelThrough(proxy.url, `${OTHER_HOST}:${api.port}`, basic(agentId, grant))).status, 403);
  t.equal(api.connections(), before, 'nothing reached the Bot API');
});

t.test(
  "the operator's allow-list is matched as grants are (case and a final dot aside), for every agent with a valid grant",
  async (t) => {
    const api = await botApi(t);
    const proxy = await egressProxy(t, api.port, ' LocalHost. ');
    const agentId = randomUUID();
    const grant = signEgressGrant(key, agentId, []);
    t.equal(
      await viaProxy(proxy.url, `http://${OTHER_HOST}:${api.port}/`, basic(agentId, grant)),
      200,
      'HTTP to the allowed host',
    );
    t.equal(
      (await tunnelThrough(proxy.url, `${OTHER_HOST.toUpperCase()}:${api.port}`, basic(agentId, grant))).status,
      200,
      'CONNECT, spelled in capitals',
    );
    t.equal(
      await viaProxy(proxy.url, `http://${TELEGRAM_HOST}:${api.port}/`, basic(agentId, grant)),
      403,
      'another host: 403',
    );
    t.equal(
      await viaProxy(proxy.url, `http://${OTHER_HOST}:${api.port}/`),
      407,
      'still no way through without a grant',
    );
  },
);

t.test("without a grant, with a forged or changed one, or with another agent's: 407", async (t) => {
  const api = await botApi(t);
  const proxy = await egressProxy(t, api.port);
  const agentId = randomUUID();
  const telegram = `${TELEGRAM_HOST}:${api.port}`;
  const grant = signEgressGrant(key, agentId, []);
  const widened = `${Buffer.from(JSON.stringify([TELEGRAM_HOST])).toString('base64url')}.${grant.split('.')[1]}`;
  const cases: [string, string | undefined][] = [
    ['no credentials', undefined],
    [
      'a grant signed with another key',
      basic(agentId, signEgressGrant(randomBytes(32).toString('base64url'), agentId, [TELEGRAM_HOST])),
    ],
    ["a no-host grant's hosts widened", basic(agentId, widened)],
    ["another agent's grant", basic(randomUUID(), signEgressGrant(key, agentId, [TELEGRAM_HOST]))],
    ['not Basic', `Bearer ${grant}`],
  ];
  const before = api.connections();
  for (const [what, authorization] of cases) {
    const tunnelled = await tunnelThrough(proxy.url, telegram, authorization);
    t.equal(tunnelled.status, 407, `CONNECT, ${what}`);
    t.equal(tunnelled.challenge, 'Basic realm="agentyard-egress"', 'naming the scheme');
    t.equal(await viaProxy(proxy.url, `http://${telegram}/`, authorization), 407, `HTTP, ${what}`);
  }
  t.equal(api.connections(), before, 'nothing reached the Bot API');
});

t.test(
  "Node's fetch under NODE_USE_ENV_PROXY sends the grant from the proxy URL (as an agent's gateway runs)",
  async (t) => {
    const api = await botApi(t);
    const proxy = await egressProxy(t, api.port);
    const agentId = randomUUID();
    const granted = grantedProxyUrl(proxy.url, key, agentId, [TELEGRAM_HOST]);
    t.match(
      await agentFetch(granted, `http://${TELEGRAM_HOST}:${api.port}/bot1:token/getMe`),
      /^200 .*agentyard_test_bot/,
      'HTTP: through the proxy with the grant',
    );
    t.equal(proxy.refusals.length, 0);

    // https: the tunnel to the granted host opens (the plain-HTTP stand-in then fails the TLS handshake).
    const before = api.connections();
    t.match(
      await agentFetch(granted, `https://${TELEGRAM_HOST}:${api.port}/bot1:token/getMe`),
      /^failed/,
      'no TLS on the stand-in',
    );
    t.equal(proxy.refusals.length, 0, 'the CONNECT carried the grant');
    t.ok(api.connections() > before, 'the tunnel reached the granted host');

    t.match(
      await agentFetch(granted, `http://${OTHER_HOST}:${api.port}/`),
      /^failed Proxy response \(403\)/,
      'another host: 403',
    );
    t.match(
      await agentFetch(proxy.url, `http://${TELEGRAM_HOST}:${api.port}/`),
      /^failed Proxy response \(407\)/,
      'the proxy URL without a grant: 407',
    );
  },
);
