// The agents' only way out of their internal network in docker-compose.yml (run from the platform
// image: `node infra/egress-proxy/egress-proxy.ts`). Two listeners on the agents' network:
//   - a forward proxy (HTTP, and CONNECT for TLS) that agents reach through HTTP(S)_PROXY. It
//     resolves each target itself and dials only public addresses on allowed ports (the rule of
//     infra/container-engine/up.sh's egress rules): never loopback, private, link-local (cloud
//     metadata), shared, multicast or reserved ranges, nor the platform's own networks.
//     With EGRESS_GRANT_KEY, each agent reaches only the hosts of its grant (its connected channels'
//     hosts, signed by the agents service: libs/runtime/src/egress-grant.ts) and EGRESS_ALLOWED_HOSTS:
//     407 without a valid grant, 403 for any other host.
//   - relays: fixed TCP forwards (`3002=edge:3002`), so agents reach the edge's agent listener
//     without the edge, or anything else of the platform, being on their network.
import { lookup } from 'node:dns/promises';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { BlockList, connect, createServer, isIP, type Socket } from 'node:net';
import { grantHost, hostGranted, proxyCredentials, verifyEgressGrant } from '../../libs/runtime/src/egress-grant.ts';

const env = process.env;
const LISTEN = env.EGRESS_LISTEN_HOST ?? '127.0.0.1';
const PROXY_PORT = port(env.EGRESS_PROXY_PORT ?? '3128', 'EGRESS_PROXY_PORT');
/** Target ports agents may reach (web and TLS by default). */
const ALLOWED_PORTS = new Set(
  (env.EGRESS_ALLOWED_PORTS ?? '80,443')
    .split(',')
    .filter(Boolean)
    .map((p) => port(p, 'EGRESS_ALLOWED_PORTS')),
);
/**
 * Host names (and their subdomains) agents may reach, as grant entries (`h` and `*.h`: one matching
 * rule for both, egress-grant.ts); empty: any public host (without grants) or none but granted ones.
 */
const ALLOWED_HOSTS = (env.EGRESS_ALLOWED_HOSTS ?? '')
  .split(',')
  .map(grantHost)
  .filter(Boolean)
  .flatMap((h) => [h, `*.${h}`]);
/** The key agents' grants are signed with (the agents service's EGRESS_GRANT_KEY); empty: no grants asked. */
const GRANT_KEY = env.EGRESS_GRANT_KEY ?? '';
/** Addresses reached although not public (an operator's own service; tests: this machine's). */
const EXTRA_ADDRESSES = cidrs(env.EGRESS_ALLOWED_ADDRESSES ?? '');
const RELAYS = (env.EGRESS_RELAYS ?? '').split(',').filter(Boolean).map(relayOf);
const CONNECT_TIMEOUT_MS = Number(env.EGRESS_CONNECT_TIMEOUT_MS ?? 10_000);
/** A tunnel or relayed connection quiet this long is closed (streamed model answers pause far less). */
const IDLE_TIMEOUT_MS = Number(env.EGRESS_IDLE_TIMEOUT_MS ?? 600_000);

function port(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 65535) throw new Error(`${name}: not a port: ${text}`);
  return value;
}

function cidrs(spec: string): BlockList {
  const list = new BlockList();
  for (const entry of spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [address, bits] = entry.split('/');
    const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
    if (!isIP(address!)) throw new Error(`EGRESS_ALLOWED_ADDRESSES: not an address: ${entry}`);
    list.addSubnet(address!, bits === undefined ? (family === 'ipv4' ? 32 : 128) : Number(bits), family);
  }
  return list;
}

function relayOf(spec: string): { listenPort: number; host: string; port: number } {
  const match = /^(\d+)=([A-Za-z0-9.-]+):(\d+)$/.exec(spec.trim());
  if (!match) throw new Error(`EGRESS_RELAYS: not <port>=<host>:<port>: ${spec}`);
  return { listenPort: port(match[1]!, 'EGRESS_RELAYS'), host: match[2]!, port: port(match[3]!, 'EGRESS_RELAYS') };
}

/** Everything that is not a public unicast address (as up.sh's egress rules refuse), IPv4 and IPv6. */
const REFUSED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const)
  REFUSED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  REFUSED.addSubnet(net, bits, 'ipv6');

class Refused extends Error {}
class Unauthorized extends Error {}

const onAllowList = (host: string) => hostGranted(ALLOWED_HOSTS, host);

/**
 * Who may reach what: without grant key, every agent the allow-list (empty: any public host); with
 * one, the hosts of the request's valid grant and the allow-list; no valid grant: nothing.
 */
function allowance(request: IncomingMessage): { agentId: string; allows(host: string): boolean } {
  if (!GRANT_KEY) return { agentId: '', allows: (host) => ALLOWED_HOSTS.length === 0 || onAllowList(host) };
  const credentials = proxyCredentials(request.headers['proxy-authorization']);
  const granted = credentials && verifyEgressGrant(GRANT_KEY, credentials.agentId, credentials.grant);
  if (!credentials || !granted)
    throw new Unauthorized(
      credentials ? 'the egress grant is not valid' : 'proxy credentials (an egress grant) expected',
    );
  return { agentId: credentials.agentId, allows: (host) => hostGranted(granted, host) || onAllowList(host) };
}

/** The address to dial for host:port, checked; the address checked is the one dialled (no DNS rebinding). */
async function vettedAddress(
  rawHost: string,
  targetPort: number,
  allowed: (host: string) => boolean,
): Promise<{ address: string; family: number }> {
  const host = grantHost(rawHost);
  if (!ALLOWED_PORTS.has(targetPort)) throw new Refused(`port ${targetPort} is not allowed`);
  if (!allowed(host)) throw new Refused(`${host} is not on the allow-list`);
  const { address, family } = isIP(host)
    ? { address: host, family: isIP(host) }
    : await lookup(host, { verbatim: true });
  const kind = family === 6 ? 'ipv6' : 'ipv4';
  if (!EXTRA_ADDRESSES.check(address, kind) && REFUSED.check(address, kind))
    throw new Refused(`${host} is not a public address`);
  return { address, family };
}

function dial(address: string, targetPort: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port: targetPort, timeout: CONNECT_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.setTimeout(IDLE_TIMEOUT_MS);
      resolve(socket);
    });
    socket.once('timeout', () => socket.destroy(new Error('connect timed out')));
    socket.once('error', reject);
  });
}

const statusOf = (error: unknown) => (error instanceof Unauthorized ? 407 : error instanceof Refused ? 403 : 502);
const reasonOf = (error: unknown) =>
  error instanceof Unauthorized
    ? 'Proxy Authentication Required'
    : error instanceof Refused
      ? 'Forbidden'
      : 'Bad Gateway';
/** A 407 names the scheme, so clients that wait for the challenge send their credentials. */
const challenge = (error: unknown): Record<string, string> =>
  error instanceof Unauthorized ? { 'proxy-authenticate': 'Basic realm="agentyard-egress"' } : {};
const log = (line: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);

/** Plain HTTP through the proxy: `GET http://host/path` forwarded to the vetted address. */
async function forward(request: IncomingMessage, response: ServerResponse) {
  let target: URL;
  try {
    target = new URL(request.url ?? '');
    if (target.protocol !== 'http:') throw new Refused('only http:// is forwarded (https goes through CONNECT)');
  } catch (error) {
    response
      .writeHead(400, { 'content-type': 'text/plain' })
      .end(error instanceof Refused ? error.message : 'absolute http:// URL expected');
    return;
  }
  let agentId = '';
  try {
    const who = allowance(request);
    agentId = who.agentId;
    const { address } = await vettedAddress(target.hostname, Number(target.port || 80), who.allows);
    const upstream = httpRequest(
      {
        host: address,
        port: Number(target.port || 80),
        method: request.method,
        path: `${target.pathname}${target.search}`,
        // The grant stays here: the target never sees the agent's proxy credentials.
        headers: Object.fromEntries(
          Object.entries({ ...request.headers, host: target.host }).filter(([name]) => name !== 'proxy-authorization'),
        ),
        timeout: IDLE_TIMEOUT_MS,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.once('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.once('error', () => (response.headersSent ? response.destroy() : response.writeHead(502).end()));
    request.pipe(upstream);
  } catch (error) {
    log({ refused: target.host, agentId, reason: (error as Error).message });
    response
      .writeHead(statusOf(error), { 'content-type': 'text/plain', ...challenge(error) })
      .end((error as Error).message);
  }
}

/** CONNECT host:port: a tunnel to the vetted address. */
async function tunnel(request: IncomingMessage, client: Socket, head: Buffer) {
  client.on('error', () => client.destroy());
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? '');
  if (!match) {
    client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    return;
  }
  let agentId = '';
  try {
    const who = allowance(request);
    agentId = who.agentId;
    const targetPort = Number(match[2]);
    const { address } = await vettedAddress(match[1]!, targetPort, who.allows);
    const upstream = await dial(address, targetPort);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    splice(client, upstream);
  } catch (error) {
    log({ refused: request.url, agentId, reason: (error as Error).message });
    const headers = Object.entries(challenge(error)).map(([name, value]) => `${name}: ${value}\r\n`);
    client.end(`HTTP/1.1 ${statusOf(error)} ${reasonOf(error)}\r\n${headers.join('')}\r\n`);
  }
}

function splice(a: Socket, b: Socket) {
  a.setTimeout(IDLE_TIMEOUT_MS);
  b.setTimeout(IDLE_TIMEOUT_MS);
  for (const [from, to] of [
    [a, b],
    [b, a],
  ] as const) {
    from.pipe(to);
    from.on('error', () => to.destroy());
    from.on('timeout', () => {
      from.destroy();
      to.destroy();
    });
    from.on('close', () => to.destroy());
  }
}

const proxy = createHttpServer({ requestTimeout: 0 }, forward);
proxy.on('connect', tunnel);
proxy.listen(PROXY_PORT, LISTEN, () =>
  log({
    msg: `egress proxy on ${LISTEN}:${PROXY_PORT}`,
    allowedPorts: [...ALLOWED_PORTS],
    allowedHosts: ALLOWED_HOSTS.length ? ALLOWED_HOSTS : GRANT_KEY ? 'none' : 'any public host',
    grants: Boolean(GRANT_KEY),
  }),
);

const relays = RELAYS.map((relay) =>
  createServer((client) => {
    client.on('error', () => client.destroy());
    dial(relay.host, relay.port).then(
      (upstream) => splice(client, upstream),
      () => client.destroy(),
    );
  }).listen(relay.listenPort, LISTEN, () =>
    log({ msg: `relay ${LISTEN}:${relay.listenPort} -> ${relay.host}:${relay.port}` }),
  ),
);

for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    for (const server of [proxy, ...relays]) server.close();
    setTimeout(() => process.exit(0), 2000).unref();
  });
