import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { productionSecrets, repoRoot } from '@agentyard/config';
import { isVerificationMail, startMailServer, unfold, verificationTokenIn } from '@agentyard/testing';
import t from 'tap';
import { Agent, fetch } from 'undici';
import { externalIpv4 } from '../../scripts/lib/processes.ts';

// docker-compose.yml brought up for real by podman-compose, on images this machine builds itself
// (infra/compose/prepare.sh: no registry here), then used as a person would: through Caddy's TLS.
// Only `npm run test:deploy` runs it. Every name, port and socket is this run's own.

const run = promisify(execFile);
const sh = (file: string, args: string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string }) =>
  run(file, args, { timeout: options.timeoutMs, env: options.env, cwd: options.cwd, maxBuffer: 64 * 1024 * 1024 });
/** The exit code (and output) of a command in a container; a code, not a throw, so a test can assert it. */
const inContainer = (container: string, command: string[], timeoutMs = 30_000) =>
  sh('podman', ['exec', container, ...command], { timeoutMs }).then(
    ({ stdout }) => ({ code: 0, stdout: stdout.trim() }),
    (error: { code?: number; stdout?: string }) => ({
      code: typeof error.code === 'number' ? error.code : -1,
      stdout: (error.stdout ?? '').trim(),
    }),
  );
/**
 * The status a container gets from `url`, asked again (up to `tries` times) while it is not 200: a
 * name just registered with the network's DNS may take a first lookup longer than one try's 5 s.
 */
async function statusFrom(container: string, url: string, tries = 6): Promise<string> {
  let answer = '';
  for (let i = 0; i < tries && answer !== '200'; i++)
    answer = (await inContainer(container, ['node', '-e', probe(url)])).stdout;
  return answer;
}
/** A node one-liner in a container: an HTTP status, or the network error's code. */
const probe = (url: string, init = '{}', timeoutMs = 5000) =>
  `fetch(${JSON.stringify(url)}, {...${init}, signal: AbortSignal.timeout(${timeoutMs})}).then(r => console.log(r.status), e => console.log(e.cause?.code ?? e.name))`;

const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const project = `aydeploy${id}`;
const network = `agentyard-agents-${id}`;
const instance = `deploy-${id}`;
const socketDir = `/run/agentyard-deploy-${id}`;
const socket = join(socketDir, 'engine.sock');
const container = (service: string) => `${project}_${service}_1`;
const PROCESSES = [
  'postgres',
  'redis',
  'auth',
  'auth-worker',
  'agents',
  'agents-worker',
  'ai',
  'scheduler',
  'scheduler-worker',
  'bridge',
  'bridge-worker',
  'trader',
  'edge',
  'egress',
];
/** The agent listener's surface-wide limit in this run (RATE_LIMITS), small enough to reach from inside an agent. */
const AGENT_LISTENER_LIMIT = 20;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until<T>(
  what: string,
  deadlineMs: number,
  everyMs: number,
  attempt: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${deadlineMs} ms${last ? ` (last: ${(last as Error).message})` : ''}`);
    await delay(everyMs);
  }
}

t.test('docker-compose.yml runs: a user registers, provisions an agent and sees it running', async (t) => {
  const started = Date.now();
  const phases: string[] = [];
  const phase = (name: string, since: number) => phases.push(`${name} ${((Date.now() - since) / 1000).toFixed(1)} s`);
  // podman-compose (unlike docker compose) lets an .env beside the file override the environment.
  if (existsSync(join(repoRoot, '.env'))) {
    t.fail(
      `${join(repoRoot, '.env')} exists: podman-compose would let it override this test's settings; move it away to run this test`,
    );
    return;
  }

  const { NODE_OPTIONS: _runnerLoaders, ...hostEnv } = process.env;
  const prepared = Object.fromEntries(
    (await sh('bash', [join(repoRoot, 'infra/compose/prepare.sh')], { timeoutMs: 20 * 60_000, env: hostEnv })).stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=', 2) as [string, string]),
  );
  phase('images and tools (infra/compose/prepare.sh)', started);
  t.match(prepared, {
    PLATFORM_IMAGE: /^localhost\/agentyard-platform:/,
    POSTGRES_IMAGE: String,
    REDIS_IMAGE: String,
    CADDY_IMAGE: String,
    AGENT_IMAGE: String,
    ENGINE_SOCKET_GID: /^\d+$/,
  });
  const gid = Number(prepared.ENGINE_SOCKET_GID);

  // An engine socket of this run's own (the same engine), given to the engine group as a Docker host's is.
  mkdirSync(socketDir, { recursive: true, mode: 0o755 });
  const engine = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], {
    detached: true,
    stdio: 'ignore',
  });
  engine.unref();
  const engineClient = new Agent({ connect: { socketPath: socket } });
  const email = `deploy-${id}@example.com`;
  // The mail server on the host's own address, which the auth worker's container reaches.
  const hostAddress = externalIpv4();
  if (!hostAddress) {
    t.fail('no non-loopback IPv4 address on this host for the mail server');
    return;
  }
  const mailbox = await startMailServer(t, hostAddress);
  // A web server on the same host address: what an agent may reach only through the egress proxy,
  // which allows exactly this address and port in this run (the LAN-like address agents never reach
  // directly), to every agent (EGRESS_ALLOWED_HOSTS) whose proxy credentials carry a valid grant.
  const outside = createHttpServer((_request, response) => response.end('outside'));
  await new Promise<void>((resolve) => outside.listen(0, hostAddress, resolve));
  t.teardown(() => new Promise((resolve) => outside.close(resolve)));
  const outsidePort = (outside.address() as { port: number }).port;
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: 'C.UTF-8',
    ...productionSecrets(),
    ...prepared,
    // Never called here (no checkout in this journey): production refuses to start without one.
    STRIPE_SECRET_KEY: `sk_test_${randomBytes(12).toString('hex')}`,
    SMTP_URL: mailbox.url,
    ADMIN_EMAILS: email,
    SITE_ADDRESS: 'localhost',
    PUBLIC_BASE_URL: `https://localhost:${httpsPort}`,
    PUBLISH_ADDRESS: '127.0.0.1',
    HTTPS_PORT: String(httpsPort),
    HTTP_PORT: String(httpPort),
    AGENT_NETWORK: network,
    RUNTIME_INSTANCE: instance,
    ENGINE_SOCKET: socket,
    EGRESS_ALLOWED_PORTS: `80,443,${outsidePort}`,
    EGRESS_ALLOWED_ADDRESSES: `${hostAddress}/32`,
    EGRESS_ALLOWED_HOSTS: hostAddress,
    RATE_LIMITS: `backend-api=${AGENT_LISTENER_LIMIT}`,
  };
  const compose = (args: string[], timeoutMs: number) =>
    sh('podman-compose', ['-p', project, '-f', 'docker-compose.yml', ...args], { timeoutMs, env, cwd: repoRoot });

  t.teardown(async () => {
    const since = Date.now();
    if (!t.passing()) {
      for (const service of ['migrate', 'edge', 'egress', 'agents', 'agents-worker', 'auth', 'ai', 'caddy']) {
        const logs = await sh('podman', ['logs', '--tail', '25', container(service)], { timeoutMs: 10_000 }).then(
          (r) => r.stdout + r.stderr,
          () => '(none)',
        );
        t.comment(`--- ${container(service)} ---\n${logs}`);
      }
    }
    // All at once (podman-compose stops one after the other, each draining for seconds), then down.
    const ours = (
      await sh('podman', ['ps', '-q', '--filter', `label=io.podman.compose.project=${project}`], {
        timeoutMs: 30_000,
      }).catch(() => ({ stdout: '' }))
    ).stdout
      .split('\n')
      .filter(Boolean);
    if (ours.length)
      await sh('podman', ['stop', '-t', '15', ...ours], { timeoutMs: 2 * 60_000 }).catch(() => undefined);
    await compose(['down', '-v', '-t', '10'], 5 * 60_000).catch((error) =>
      t.comment(`podman-compose down: ${(error as Error).message.split('\n')[0]}`),
    );
    const agents = (
      await sh('podman', ['ps', '-aq', '--filter', `label=agentyard.instance=${instance}`], {
        timeoutMs: 30_000,
      }).catch(() => ({ stdout: '' }))
    ).stdout
      .split('\n')
      .filter(Boolean);
    if (agents.length) await sh('podman', ['rm', '-f', ...agents], { timeoutMs: 60_000 }).catch(() => undefined);
    const volumes = (
      await sh('podman', ['volume', 'ls', '-q', '--filter', `name=agentyard-${instance}-`], {
        timeoutMs: 30_000,
      }).catch(() => ({ stdout: '' }))
    ).stdout
      .split('\n')
      .filter(Boolean);
    if (volumes.length)
      await sh('podman', ['volume', 'rm', '-f', ...volumes], { timeoutMs: 60_000 }).catch(() => undefined);
    // Each agent's own network (made by the agents service) carries the instance's label.
    const agentNetworks = (
      await sh('podman', ['network', 'ls', '-q', '--filter', `label=agentyard.instance=${instance}`], {
        timeoutMs: 30_000,
      }).catch(() => ({ stdout: '' }))
    ).stdout
      .split('\n')
      .filter(Boolean);
    await sh(
      'podman',
      [
        'network',
        'rm',
        '-f',
        network,
        ...agentNetworks,
        ...['default', 'proxy', 'public'].map((n) => `${project}_${n}`),
      ],
      { timeoutMs: 60_000 },
    ).catch(() => undefined);
    await engineClient.close();
    if (engine.pid)
      try {
        process.kill(-engine.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    rmSync(socketDir, { recursive: true, force: true });
    phase('teardown', since);
    t.comment(`wall time ${((Date.now() - started) / 1000).toFixed(1)} s: ${phases.join('; ')}`);
  });

  await until('the engine socket', 20_000, 100, async () =>
    (await fetch('http://engine/_ping', { dispatcher: engineClient, signal: AbortSignal.timeout(2000) })).ok
      ? true
      : undefined,
  );
  chownSync(socket, 0, gid);
  chmodSync(socket, 0o660);

  // Up, as an operator would, with nothing built or pulled during it.
  let since = Date.now();
  await compose(['up', '-d', '--no-build'], 10 * 60_000);
  phase('podman-compose up', since);

  // Through Caddy: its own CA signs the certificate for `localhost`, and we trust exactly that CA.
  since = Date.now();
  const ca = await until(
    "Caddy's local CA",
    5 * 60_000,
    1000,
    async () =>
      (
        await sh('podman', ['exec', container('caddy'), 'cat', '/data/caddy/pki/authorities/local/root.crt'], {
          timeoutMs: 10_000,
        })
      ).stdout || undefined,
  );
  const tls = new Agent({ connect: { ca } });
  const base = `https://localhost:${httpsPort}`;
  await until('the web surface through Caddy', 5 * 60_000, 1000, async () =>
    (await fetch(`${base}/api/health`, { dispatcher: tls, signal: AbortSignal.timeout(5000) })).status === 200
      ? true
      : undefined,
  );
  // podman-compose neither waits for healthchecks nor runs them without systemd: each one's own
  // healthcheck (/readyz: its PostgreSQL, Redis and, for agents, the engine) is run here until it passes.
  await until('every process ready by its compose healthcheck', 5 * 60_000, 2000, async () => {
    const results = await Promise.all(
      PROCESSES.map((service) =>
        sh('podman', ['healthcheck', 'run', container(service)], { timeoutMs: 20_000 }).then(
          () => null,
          () => service,
        ),
      ),
    );
    const waiting = results.filter(Boolean);
    if (waiting.length) throw new Error(`not ready: ${waiting.join(', ')}`);
    return true;
  });
  phase('stack answering through TLS, every process ready', since);
  t.teardown(() => tls.close());

  let cookie = '';
  const web = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      dispatcher: tls,
      signal: AbortSignal.timeout(30_000),
      redirect: 'manual',
      headers: {
        origin: base,
        ...(cookie ? { cookie } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const session = response.headers.getSetCookie().find((c) => c.startsWith('agentyard-session='));
    if (session) {
      t.match(session, /;\s*Secure/i, 'the session cookie is Secure behind TLS');
      cookie = session.split(';')[0]!;
    }
    return response;
  };

  // A person signs up (an admin by ADMIN_EMAILS: the network plan, no checkout) and provisions an agent.
  since = Date.now();
  const password = randomBytes(12).toString('base64url');
  const registered = await web('POST', '/api/register', { email, password, name: 'Deploy' });
  const mailed = mailbox.nextMail((mail) => isVerificationMail(mail) && mail.to.includes(email));
  if (!t.equal(registered.status, 201, 'registered')) return;
  const { id: userId } = (await registered.json()) as { id: string };
  t.equal((await web('POST', '/api/auth/login', { email, password })).status, 200, 'signed in');
  // Production admins act only with a verified address: verified from the link the auth worker mailed.
  const mail = await Promise.race([mailed, delay(120_000).then(() => undefined)]);
  if (!t.ok(mail, 'the verification mail arrives from the auth worker')) return;
  t.ok(unfold(mail!.raw).includes(`${base}/verify-email?token=`), 'linking to the public address');
  t.equal(
    (await web('POST', '/api/auth/verify-email', { token: verificationTokenIn(mail!.raw) })).status,
    200,
    'the address is verified',
  );
  // Two agents (a second one to reach for, from inside the first), provisioned at once.
  const provision = async (name: string) => {
    const provisioned = await web('POST', '/api/agents/provision', { name });
    if (!t.equal(provisioned.status, 201, `provisioning ${name} accepted`)) {
      t.comment(await provisioned.text());
      return undefined;
    }
    const { agent } = (await provisioned.json()) as { agent: { id: string; status: string } };
    return agent;
  };
  const [agent, neighbour] = await Promise.all([provision('Composed'), provision('Neighbour')]);
  if (!agent || !neighbour) return;
  const running = (id: string) =>
    until('the agent leaving provisioning', 8 * 60_000, 2000, async () => {
      const response = await web('GET', `/api/agents/${id}`);
      if (response.status !== 200) return undefined;
      const now = ((await response.json()) as { agent: { status: string } }).agent.status;
      return now === 'provisioning' ? undefined : now;
    });
  t.same(await Promise.all([running(agent.id), running(neighbour.id)]), ['running', 'running'], 'both agents run');
  phase('provisioning → running (two agents)', since);

  // Each container: on a network of its own under its own name, nothing published on the host.
  const containers = JSON.parse(
    (
      await sh('podman', ['ps', '--format', 'json', '--filter', `label=agentyard.instance=${instance}`], {
        timeoutMs: 30_000,
      })
    ).stdout,
  ) as {
    Id: string;
    Labels: Record<string, string>;
    Networks: string[];
    Ports: unknown[] | null;
  }[];
  const containerOf = (agentId: string) => containers.find((c) => c.Labels['agentyard.agent-id'] === agentId);
  const agentContainer = containerOf(agent.id);
  const neighbourContainer = containerOf(neighbour.id);
  t.ok(agentContainer && neighbourContainer, 'the agent containers run on the engine');
  t.same(agentContainer?.Networks, [`${network}-${agent.id}`], 'the agent on its own network only');
  t.same(neighbourContainer?.Networks, [`${network}-${neighbour.id}`], 'the other on its own');
  t.same(agentContainer?.Ports ?? [], [], 'no port published');
  const gateway = `http://agentyard-agent-${agent.id}:18789/healthz`;
  t.equal(
    await statusFrom(container('scheduler-worker'), gateway),
    '200',
    'the scheduler worker reaches the gateway by name',
  );
  t.equal(await statusFrom(container('agents'), gateway), '200', 'the agents service reaches it too');
  t.match(
    (await inContainer(container('auth'), ['node', '-e', probe(gateway)])).stdout,
    /^(ENOTFOUND|EAI_AGAIN|TimeoutError)$/,
    'a service off that network does not',
  );
  const toEdge = await inContainer(agentContainer!.Id, ['node', '-e', probe('http://egress:3002/v1/models')]);
  t.match(
    toEdge.stdout,
    /^[1-5]\d\d$/,
    `the agent reaches the edge's agent listener through the egress relay (HTTP ${toEdge.stdout})`,
  );

  // Issue 27 (N8): from inside a real agent, nothing of the platform but the agent listener answers.
  const addressesOf = async (service: string) => {
    const [inspected] = JSON.parse(
      (await sh('podman', ['inspect', container(service)], { timeoutMs: 30_000 })).stdout,
    ) as { NetworkSettings: { Networks: Record<string, { IPAddress: string }> } }[];
    return Object.entries(inspected!.NetworkSettings.Networks).map(([name, n]) => ({ name, address: n.IPAddress }));
  };
  const unreachable = /^(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|TimeoutError)$/;
  // Direct (no proxy): what an agent's own code can open itself.
  const direct = async (url: string) =>
    (
      await inContainer(agentContainer!.Id, [
        'env',
        '-u',
        'HTTP_PROXY',
        '-u',
        'http_proxy',
        '-u',
        'HTTPS_PROXY',
        '-u',
        'https_proxy',
        '-u',
        'NODE_USE_ENV_PROXY',
        'node',
        '-e',
        probe(url),
      ])
    ).stdout;
  for (const { name, address } of await addressesOf('edge'))
    for (const [port, what] of [
      [3000, 'web'],
      [3001, 'backend'],
      [3002, 'agent'],
      [9000, 'operations'],
    ] as const)
      t.match(
        await direct(`http://${address}:${port}/api/health`),
        unreachable,
        `the edge's ${what} listener on ${name} is out of the agent's reach`,
      );
  t.match(await direct('http://edge:3000/api/health'), unreachable, 'the edge has no name on the agents network');
  for (const service of ['agents', 'agents-worker', 'scheduler-worker', 'auth', 'ai'])
    for (const { name, address } of await addressesOf(service))
      t.match(
        await direct(`http://${address}:9000/metrics`),
        unreachable,
        `${service}'s operations listener on ${name} is out of reach`,
      );
  for (const { name, address } of await addressesOf('agents'))
    t.match(
      await direct(`http://${address}:4102/api/agents`),
      unreachable,
      `the agents service's listener on ${name} is out of reach`,
    );
  t.match(
    await direct(`http://${hostAddress}:${outsidePort}/`),
    unreachable,
    "a LAN-like address (this host's) is not reachable directly",
  );
  // The gateway of the agent's own network is an address of this host (the engine's DNS answers there):
  // a host service listening on every address is out of reach there too (infra/container-engine/up.sh).
  const everywhere = createHttpServer((_request, response) => response.end('host'));
  await new Promise<void>((resolve) => everywhere.listen(0, '0.0.0.0', resolve));
  t.teardown(() => new Promise((resolve) => everywhere.close(resolve)));
  const everywherePort = (everywhere.address() as { port: number }).port;
  const [agentInspected] = JSON.parse(
    (await sh('podman', ['inspect', agentContainer!.Id], { timeoutMs: 30_000 })).stdout,
  ) as {
    NetworkSettings: { Networks: Record<string, { Gateway: string }> };
  }[];
  for (const { Gateway } of Object.values(agentInspected!.NetworkSettings.Networks))
    t.match(
      await direct(`http://${Gateway}:${everywherePort}/`),
      unreachable,
      `a host service on every address is out of reach at the network's gateway (${Gateway})`,
    );
  // Another agent: its gateway has no name here, and its address no route.
  t.equal(
    await statusFrom(container('scheduler-worker'), `http://agentyard-agent-${neighbour.id}:18789/healthz`),
    '200',
    "the other agent's gateway answers its callers",
  );
  t.match(
    await direct(`http://agentyard-agent-${neighbour.id}:18789/healthz`),
    unreachable,
    "another agent's gateway has no name on the agent's network",
  );
  const [neighbourInspected] = JSON.parse(
    (await sh('podman', ['inspect', neighbourContainer!.Id], { timeoutMs: 30_000 })).stdout,
  ) as {
    NetworkSettings: { Networks: Record<string, { IPAddress: string }> };
  }[];
  for (const { IPAddress } of Object.values(neighbourInspected!.NetworkSettings.Networks))
    t.match(
      await direct(`http://${IPAddress}:18789/healthz`),
      unreachable,
      `nor has its address (${IPAddress}) a route from the agent`,
    );
  // Through the egress proxy (HTTP(S)_PROXY in the agent's environment): the allowed address, nothing private.
  // Node tunnels every proxied request (CONNECT): a refusal is the proxy's 403 to it.
  const viaProxy = async (url: string, proxyEnv: string[] = []) =>
    (
      await inContainer(agentContainer!.Id, [
        'env',
        ...proxyEnv,
        'node',
        '-e',
        `fetch(${JSON.stringify(url)}, {signal: AbortSignal.timeout(5000)}).then(r => console.log(r.status), e => console.log(e.cause?.cause?.message ?? e.cause?.code ?? e.name))`,
      ])
    ).stdout;
  const refused = /^Proxy response \(403\)/;
  t.equal(
    await viaProxy(`http://${hostAddress}:${outsidePort}/`),
    '200',
    "the allowed address answers through the egress proxy (the agent image's Node sent its grant)",
  );
  // Issue 29: the agent's grant (no channel: no host) is in its proxy URL; without it the proxy asks for one.
  const ungranted = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'].map(
    (name) => `${name}=http://egress:3128`,
  );
  t.match(
    await viaProxy(`http://${hostAddress}:${outsidePort}/`, ungranted),
    /^Proxy response \(407\)/,
    'without its grant: 407',
  );
  t.match(await viaProxy('https://api.telegram.org/'), refused, 'an agent without a channel does not reach Telegram');
  t.match(
    await viaProxy('http://169.254.169.254/latest/meta-data/'),
    refused,
    'cloud metadata is refused by the proxy',
  );
  const [postgresAddress] = await addressesOf('postgres');
  t.match(
    await viaProxy(`http://${postgresAddress!.address}:80/`),
    refused,
    "the platform's own network is refused by the proxy",
  );
  t.match(await viaProxy(`http://${hostAddress}:8080/`), refused, 'other ports are refused by the proxy');

  // Issue 27 (N4): a spoofed X-Forwarded-For from an agent gets no fresh rate-limit counter.
  const spoofed = await inContainer(agentContainer!.Id, [
    'node',
    '-e',
    `(async () => { const out = []; for (let i = 1; i <= ${AGENT_LISTENER_LIMIT + 5}; i++) out.push((await fetch('http://egress:3002/api/health', { headers: { 'x-forwarded-for': '203.0.113.' + i }, signal: AbortSignal.timeout(5000) })).status); console.log(out.join(',')); })()`,
  ]);
  const statuses = spoofed.stdout.split(',').map(Number);
  t.equal(statuses.length, AGENT_LISTENER_LIMIT + 5, `every request was answered (${spoofed.stdout})`);
  t.not(statuses[0], 429, 'the first request is within the limit');
  t.ok(statuses.includes(429), 'a fresh X-Forwarded-For on each request does not escape the limit');

  // The engine socket: the agents service and its worker, as node with the socket's group; nobody else.
  for (const service of ['agents', 'agents-worker']) {
    t.equal((await inContainer(container(service), ['id', '-u'])).stdout, '1000', `${service} runs as node`);
    t.ok(
      (await inContainer(container(service), ['id', '-G'])).stdout.split(' ').includes(String(gid)),
      `${service} has the engine socket's group`,
    );
  }
  for (const other of ['auth', 'edge', 'scheduler-worker', 'ai'])
    t.equal(
      (await inContainer(container(other), ['test', '-e', '/var/run/docker.sock'])).code,
      1,
      `${other} has no engine socket`,
    );
  t.equal((await inContainer(agentContainer!.Id, ['test', '-e', '/var/run/docker.sock'])).code, 1, 'nor has the agent');

  // The web listener is on Caddy's network only; the backend surface on the platform's.
  t.equal(
    (await inContainer(container('auth'), ['node', '-e', probe('http://edge:3000/api/health')])).stdout,
    'ECONNREFUSED',
    "the web listener is not on the platform's network",
  );

  // Issue 27 (N15): secrets only where their process reads them; Redis answers nobody without its password.
  for (const [service, secret] of [
    ['scheduler', 'INTERNAL_API_KEY'],
    ['edge', 'ENCRYPTION_KEYS'],
    ['ai', 'SESSION_SECRET'],
    ['trader', 'REDIS_URL'],
    ['egress', 'IDENTITY_SECRET'],
  ] as const)
    t.equal(
      (await inContainer(container(service), ['node', '-e', `console.log(${JSON.stringify(secret)} in process.env)`]))
        .stdout,
      'false',
      `${service} has no ${secret}`,
    );
  t.match(
    (await inContainer(container('redis'), ['env', '-u', 'REDISCLI_AUTH', 'redis-cli', 'ping'])).stdout,
    /NOAUTH/,
    'Redis refuses a client without the password',
  );

  // Deleted on the backend surface (inside the compose network: it is published nowhere), it is gone.
  const deleted = await inContainer(
    container('auth'),
    [
      'node',
      '-e',
      // Deleting stops the container first (its stop timeout): more than a probe's 5 s on a busy machine.
      probe(
        `http://edge:3001/api/agents/${agent.id}`,
        `{method: 'DELETE', headers: {authorization: 'Bearer ' + ${JSON.stringify(env.INTERNAL_API_KEY)}, 'x-user-id': ${JSON.stringify(userId)}}}`,
        60_000,
      ),
    ],
    90_000,
  );
  t.match(deleted.stdout, /^20\d$/, 'the agent is deleted');
  const left = (
    await sh('podman', ['ps', '-aq', '--no-trunc', '--filter', `label=agentyard.instance=${instance}`], {
      timeoutMs: 30_000,
    })
  ).stdout.trim();
  t.equal(left, neighbourContainer!.Id, 'and its container with it (the other agent stays)');
  const networkGone = await until("the deleted agent's network going", 60_000, 1000, async () =>
    sh('podman', ['network', 'exists', `${network}-${agent.id}`], { timeoutMs: 30_000 }).then(
      () => undefined,
      () => true,
    ),
  );
  t.ok(networkGone, 'its network went with it');
});
