import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueEvents } from 'bullmq';
import WebSocket from 'ws';
import { hashToken, parseKeyring, randomToken } from '@agentyard/crypto';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { createQueues, Job, QUEUES } from '@agentyard/queue';
import { OPENCLAW_CONTROL_UI_ROOT, OPENCLAW_ENTRY } from '@agentyard/runtime';
import { repoRoot } from '@agentyard/config';
import { createUserRow, startPlatform, systemDb } from '@agentyard/testing';
import { startWorkers } from '../../src/app.ts';
import { loadAgentsConfig } from '../../src/config.ts';
import { CONTROL_UI_SCOPES, controlUiUpstreamPath } from '../../src/domain/gateway/control-ui.ts';
import { controlUiFile, openControlUiCopy } from '../../src/domain/gateway/control-ui-copy.ts';
import { provisionJobId } from '../../src/domain/runtime/provisioning.ts';
import { chromium } from 'playwright-core';

// The agent's own OpenClaw Control UI through the real edge (issue 20), on the real OpenClaw gateway
// (process driver): its page and assets for the owner by session cookie, its WebSocket reaching
// hello-ok, and the gateway token in nothing the browser receives.
t.setTimeout(900_000);

t.test("the proxy forwards only paths under the agent's base path, as the gateway will read them", async (t) => {
  const id = '6f1c2a52-32a8-4a8e-9a38-1b1b6f1d1e11';
  t.equal(controlUiUpstreamPath(`/api/control-ui/${id}/assets/a.js?v=1`, id), `/api/control-ui/${id}/assets/a.js?v=1`);
  t.equal(controlUiUpstreamPath(`/api/control-ui/${id}/`, id), `/api/control-ui/${id}/`);
  for (const outside of [
    `/api/control-ui/${id}/../../../v1/models`,
    `/api/control-ui/${id}/%2e%2e/%2e%2e/%2e%2e/hooks/agent`,
    `/api/control-ui/${id}/..\\..\\..\\api/v1/admin/rpc`,
    `/api/control-ui/${id}/../other/x`,
    `//evil.example/api/control-ui/${id}/`,
    `/api/control-ui/${id}x/`,
  ]) {
    t.equal(controlUiUpstreamPath(outside, id), null, `${outside}: refused`);
  }
});

t.test("the platform's copy of the Control UI: none where there is none, and only its own files", async (t) => {
  t.equal(
    openControlUiCopy(join(tmpdir(), `no-control-ui-${randomBytes(4).toString('hex')}`)),
    null,
    'no copy: the route answers 503, it never falls back to the agent',
  );
  const root = await mkdtemp(join(tmpdir(), 'agentyard-control-ui-copy-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'ui', 'assets'), { recursive: true });
  await writeFile(join(root, 'ui', 'index.html'), '<html><script src="./assets/a.js"></script></html>');
  await writeFile(join(root, 'ui', 'assets', 'a.js'), 'export {}');
  await writeFile(join(root, 'secret.js'), 'outside');
  await symlink(join(root, 'secret.js'), join(root, 'ui', 'assets', 'link.js'));
  const copy = openControlUiCopy(join(root, 'ui'))!;
  t.ok(copy, 'a copy with its index.html');
  t.match(await controlUiFile(copy, 'assets/a.js', ''), { contentType: /javascript/, immutable: true });
  for (const outside of [
    '../secret.js',
    '%2e%2e/secret.js',
    'assets/..%2f..%2fsecret.js',
    'assets/link.js',
    'index.html',
    'assets\\a.js',
    '/etc/hostname',
    'assets/a.js%00.png',
  ]) {
    t.equal(await controlUiFile(copy, outside, ''), null, `${outside}: not served`);
  }
});

t.test(
  'the Control UI opens for its owner through the web surface, the gateway token never leaves the platform',
  { skip: !existsSync(OPENCLAW_ENTRY) && 'OpenClaw is not installed (infra/agent-image/build.sh)' },
  async (t) => {
    const own = `${process.env.QUEUE_PREFIX}-cu${randomBytes(3).toString('hex')}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-control-ui-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const env = {
      QUEUE_PREFIX: own,
      RUNTIME_INSTANCE: own,
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: dataDir,
      AGENT_IMAGE: OPENCLAW_ENTRY,
      AGENT_PORT_RANGE: '31000-31499',
      AGENT_READY_TIMEOUT_MS: '240000',
      RATE_LIMITS: 'web-gateway=100000,web-control-ui=100000',
    };
    const platform = await startPlatform(['agents'], env);
    t.teardown(() => platform.stop());
    const config = loadAgentsConfig({ ...platform.env });
    const workers = await startWorkers(config);
    const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: own });
    const events = new QueueEvents(QUEUES.provisioning, { connection: { url: config.REDIS_URL }, prefix: own });
    t.teardown(async () => {
      await workers.context.runtime.settle();
      for (const c of await workers.context.driver.list()) {
        await workers.context.driver.remove(c.id);
        await workers.context.driver.removeState(c.agentId);
      }
      await events.close();
      await queues.close();
      await workers.close();
    });

    const publicOrigin = new URL(platform.env.PUBLIC_BASE_URL!).origin;
    const signedIn = async () => {
      const user = await createUserRow({ plan: 'collective' });
      await systemDb()
        .insertInto('subscriptions')
        .values({ id: `sub_${randomBytes(6).toString('hex')}`, user_id: user.id, status: 'active', plan: 'collective' })
        .execute();
      const session = randomToken();
      await systemDb()
        .insertInto('sessions')
        .values({ user_id: user.id, token_hash: hashToken(session), expires_at: new Date(Date.now() + 3600_000) })
        .execute();
      return { ...user, cookie: `agentyard-session=${session}` };
    };
    const owner = await signedIn();
    const stranger = await signedIn();

    const provisioned = await fetch(`${platform.webUrl}/api/agents/provision`, {
      method: 'POST',
      headers: { cookie: owner.cookie, origin: publicOrigin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Claw with a UI' }),
    });
    t.equal(provisioned.status, 201);
    const agentId = ((await provisioned.json()) as { agent: { id: string } }).agent.id;
    const job = await Job.fromId(queues.get(QUEUES.provisioning), provisionJobId(agentId));
    t.match(await job!.waitUntilFinished(events, 300_000), /^running/, 'the real gateway is up');
    const row = await systemDb()
      .selectFrom('agents')
      .select(['gateway_token_sealed'])
      .where('id', '=', agentId)
      .executeTakeFirstOrThrow();
    const gatewayToken = openAgentSecret(
      parseKeyring(config.ENCRYPTION_KEYS),
      agentId,
      'gateway-token',
      row.gateway_token_sealed!,
    );
    t.ok(
      gatewayToken.length >= 16,
      'the agent has its gateway token (the test reads it to look for it in what the client got)',
    );

    const base = `/api/control-ui/${agentId}`;
    /** Everything the client received, headers and bodies, to look for the token in. */
    const received: string[] = [];
    const get = async (path: string, cookie?: string) => {
      const res = await fetch(`${platform.webUrl}${path}`, {
        headers: cookie ? { cookie } : {},
        signal: AbortSignal.timeout(60_000),
      });
      const body = await res.text();
      received.push(JSON.stringify([...res.headers]), body);
      return { status: res.status, body, type: res.headers.get('content-type') ?? '' };
    };

    await t.test('the owner loads the page, its assets and its runtime config through the proxy', async (t) => {
      const page = await get(`${base}/`, owner.cookie);
      t.equal(page.status, 200, page.body.slice(0, 200));
      t.match(page.type, /text\/html/);
      t.match(page.body, /<title>OpenClaw Control<\/title>/, "the Control UI's own page");
      t.match(
        page.body,
        new RegExp(`data-openclaw-control-ui-base-path="${base}"`),
        "served for the proxy's path (gateway.controlUi.basePath): its WebSocket opens there too",
      );
      const script = /src="([^"]+\/assets\/index-[^"]+\.js)"/.exec(page.body)?.[1];
      t.ok(script?.startsWith(`${base}/assets/`), `its assets are under the proxy's path (${script})`);
      const asset = await get(script!, owner.cookie);
      t.equal(asset.status, 200);
      t.match(asset.type, /javascript/);
      const runtimeConfig = await get(`${base}/control-ui-config.json`, owner.cookie);
      t.equal(
        runtimeConfig.status,
        200,
        'the runtime config, which the gateway serves to an authenticated caller only: the proxy authenticated it',
      );
      t.match(JSON.parse(runtimeConfig.body), { basePath: base });
      const { gateway_url: gatewayUrl } = await systemDb()
        .selectFrom('agents')
        .select('gateway_url')
        .where('id', '=', agentId)
        .executeTakeFirstOrThrow();
      // The gateway's own UI sits at its root (its config names no basePath: a claimed warm gateway hot-reloads it).
      const direct = await fetch(`${gatewayUrl}/control-ui-config.json`, { signal: AbortSignal.timeout(30_000) });
      t.equal(
        direct.status,
        401,
        "the same file on the gateway without the token: refused (the proxy's bearer is what opened it)",
      );
    });

    await t.test(
      "what answers at the agent's address never reaches the browser: the platform serves its own copy of the Control UI",
      async (t) => {
        // An impostor where the agent's gateway was recorded, as an agent that replaced its gateway (or its controlUi.root) would be.
        const marker = `impostor-${randomBytes(4).toString('hex')}`;
        let impostorRequests = 0;
        const impostor = createServer((req, res) => {
          impostorRequests += 1;
          if (req.url?.endsWith('.js'))
            res
              .writeHead(200, { 'content-type': 'application/javascript' })
              .end(`fetch('/api/user/api-keys',{method:'POST'});// ${marker}`);
          else if (req.url?.endsWith('.json'))
            res.writeHead(200, { 'content-type': 'text/html' }).end(`<script>/* ${marker} */</script>`);
          else
            res
              .writeHead(200, { 'content-type': 'text/html' })
              .end(
                `<!doctype html><title>OpenClaw Control</title><script src="${base}/assets/evil.js"></script><!-- ${marker} -->`,
              );
        });
        await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
        t.teardown(() => new Promise<void>((resolve) => impostor.close(() => resolve())));
        const { gateway_url: recorded } = await systemDb()
          .selectFrom('agents')
          .select('gateway_url')
          .where('id', '=', agentId)
          .executeTakeFirstOrThrow();
        await systemDb()
          .updateTable('agents')
          .set({ gateway_url: `http://127.0.0.1:${(impostor.address() as AddressInfo).port}` })
          .where('id', '=', agentId)
          .execute();
        t.teardown(() =>
          systemDb().updateTable('agents').set({ gateway_url: recorded }).where('id', '=', agentId).execute(),
        );

        const packaged = OPENCLAW_CONTROL_UI_ROOT;
        const sha = (body: string | Buffer) => createHash('sha256').update(body).digest('hex');
        const page = await get(`${base}/`, owner.cookie);
        t.equal(page.status, 200, page.body.slice(0, 200));
        t.notMatch(page.body, marker, "the impostor's page is not served");
        const packagedScript = /src="\.\/(assets\/index-[^"]+\.js)"/.exec(
          await readFile(join(packaged, 'index.html'), 'utf8'),
        )![1]!;
        t.match(page.body, `src="${base}/${packagedScript}"`, "the page loads the package's own entry script");
        t.match(page.body, new RegExp(`data-openclaw-control-ui-base-path="${base}"`));
        const csp =
          (
            await fetch(`${platform.webUrl}${base}/`, {
              headers: { cookie: owner.cookie },
              signal: AbortSignal.timeout(30_000),
            })
          ).headers.get('content-security-policy') ?? '';
        t.match(
          csp,
          new RegExp(`script-src ${publicOrigin}${base}/ `),
          `scripts only from under the proxy path (${csp})`,
        );
        t.match(
          csp,
          /connect-src 'self' data:(;|$)/,
          'connections only to the platform itself (and data: urls, which the UI reads its icons from)',
        );
        t.match(csp, /default-src 'none'|default-src 'self'/);
        t.notMatch(
          csp,
          /script-src[^;]*('unsafe-inline'|'unsafe-eval'|https:|\*)/,
          "no inline or remote script but the page's own, by hash",
        );
        for (const file of [packagedScript, 'favicon.svg', 'sw.js', 'manifest.webmanifest']) {
          const res = await fetch(`${platform.webUrl}${base}/${file}`, {
            headers: { cookie: owner.cookie },
            signal: AbortSignal.timeout(30_000),
          });
          const body = Buffer.from(await res.arrayBuffer());
          received.push(body.toString('utf8'));
          t.equal(res.status, 200, file);
          t.equal(sha(body), sha(await readFile(join(packaged, file))), `${file}: byte for byte the package's`);
        }
        const evil = await get(`${base}/assets/evil.js`, owner.cookie);
        t.equal(evil.status, 404, 'a script the package does not have: 404');
        const runtimeConfig = await get(`${base}/control-ui-config.json`, owner.cookie);
        t.equal(runtimeConfig.status, 200);
        t.match(runtimeConfig.type, /^application\/json/);
        t.notMatch(runtimeConfig.body, marker);
        t.match(JSON.parse(runtimeConfig.body), {
          basePath: base,
          assistantName: 'Claw with a UI',
          terminalEnabled: false,
        });
        t.equal(
          impostorRequests,
          0,
          "no HTTP request went to the agent's address: nothing of the page comes from the agent",
        );
      },
    );

    await t.test(
      'a WebSocket connect through the proxy reaches hello-ok without the client holding the token',
      async (t) => {
        // At the base path itself, where the page opens it.
        const socket = new WebSocket(`${platform.webUrl.replace('http', 'ws')}${base}`, {
          headers: { cookie: owner.cookie, origin: publicOrigin },
        });
        t.teardown(() => socket.terminate());
        const frames: Record<string, unknown>[] = [];
        const waiters: [(f: Record<string, unknown>) => boolean, (f: Record<string, unknown>) => void][] = [];
        socket.on('message', (data) => {
          const text = data.toString();
          received.push(text);
          const frame = JSON.parse(text) as Record<string, unknown>;
          frames.push(frame);
          for (const [i, [matches, resolve]] of waiters.entries())
            if (matches(frame)) {
              waiters.splice(i, 1);
              resolve(frame);
              break;
            }
        });
        const next = (matches: (f: Record<string, unknown>) => boolean, what: string) => {
          const seen = frames.find(matches);
          if (seen) return Promise.resolve(seen);
          return new Promise<Record<string, unknown>>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no ${what} within 60 s`)), 60_000);
            waiters.push([
              matches,
              (f) => {
                clearTimeout(timer);
                resolve(f);
              },
            ]);
            socket.once('close', (code) => reject(new Error(`closed (${code}) before ${what}`)));
          });
        };
        const challenge = await next((f) => f.type === 'event' && f.event === 'connect.challenge', 'challenge');
        t.match(challenge, { payload: { nonce: String, ts: Number } }, 'a challenge, as the gateway sends one');
        // What the Control UI sends: its client, the scopes it would like, no token (it has none).
        socket.send(
          JSON.stringify({
            type: 'req',
            id: 'connect-1',
            method: 'connect',
            params: {
              minProtocol: 4,
              maxProtocol: 4,
              client: { id: 'openclaw-control-ui', version: 'dev', platform: 'Linux x86_64', mode: 'webchat' },
              role: 'operator',
              scopes: ['operator.admin', 'operator.read', 'operator.write'],
              caps: ['tool-events'],
              auth: {},
            },
          }),
        );
        const hello = await next((f) => f.type === 'res' && f.id === 'connect-1', 'hello');
        t.equal(hello.ok, true, JSON.stringify(hello.error ?? {}));
        t.match(
          hello.payload,
          { type: /^hello-ok$/, protocol: 4, server: { version: String }, auth: { role: /^operator$/ } },
          "the gateway's own hello-ok",
        );
        const auth = (hello.payload as { auth: { scopes: string[]; deviceToken?: string } }).auth;
        t.same(
          [...auth.scopes].sort(),
          [...CONTROL_UI_SCOPES].sort(),
          "the proxy's scopes: no admin, whatever the page asked for",
        );
        t.equal(auth.deviceToken, undefined, 'no device token reaches the browser');

        socket.send(JSON.stringify({ type: 'req', id: 'sessions-1', method: 'sessions.list', params: {} }));
        const sessions = await next((f) => f.type === 'res' && f.id === 'sessions-1', 'sessions.list');
        t.equal(
          sessions.ok,
          true,
          `a read method works on the relayed connection: ${JSON.stringify(sessions.error ?? {})}`,
        );
        socket.send(JSON.stringify({ type: 'req', id: 'config-1', method: 'config.get', params: {} }));
        const configRead = await next((f) => f.type === 'res' && f.id === 'config-1', 'config.get');
        t.equal(
          configRead.ok,
          true,
          "the gateway's config may be read (operator.read; OpenClaw redacts its secrets: the last test looks for the token in it too)",
        );
        socket.send(JSON.stringify({ type: 'req', id: 'terminal-1', method: 'terminal.open', params: {} }));
        const terminal = await next((f) => f.type === 'res' && f.id === 'terminal-1', 'terminal.open');
        t.equal(terminal.ok, false, 'admin methods are refused: no shell terminal, no config writes');
        t.match(JSON.stringify(terminal.error), /operator\.admin/);
      },
    );

    await t.test(
      'others are refused: another user 404, no session 401, a foreign origin 403, a path outside the UI 404',
      async (t) => {
        t.equal((await get(`${base}/`, stranger.cookie)).status, 404, "another user's agent: 404");
        t.equal((await get(`${base}/control-ui-config.json`, stranger.cookie)).status, 404);
        t.equal((await get(`${base}/`)).status, 401, 'no session: 401');
        const upgrade = (headers: Record<string, string>, path = base) =>
          new Promise<number>((resolve, reject) => {
            const socket = new WebSocket(`${platform.webUrl.replace('http', 'ws')}${path}`, { headers });
            socket.once('unexpected-response', (_req, res) => {
              resolve(res.statusCode ?? 0);
              socket.terminate();
            });
            socket.once('open', () => {
              socket.terminate();
              reject(new Error('the upgrade was accepted'));
            });
            socket.once('error', () => undefined);
          });
        t.equal(
          await upgrade({ cookie: stranger.cookie, origin: publicOrigin }),
          404,
          "another user's WebSocket upgrade: 404",
        );
        t.equal(
          await upgrade({ cookie: stranger.cookie, origin: publicOrigin }, `${base}/`),
          404,
          'under the base path too',
        );
        t.equal(await upgrade({ origin: publicOrigin }), 401, 'a WebSocket upgrade without a session: 401');
        t.equal(
          await upgrade({ cookie: owner.cookie, origin: 'https://evil.example' }),
          403,
          "the owner's cookie from a foreign origin: refused before any upgrade",
        );
        // Raw paths (fetch would resolve the dots): none may reach the gateway's other routes with the proxy's bearer.
        for (const path of [
          `${base}/../../../v1/models`,
          `${base}/%2e%2e/%2e%2e/%2e%2e/v1/models`,
          `${base}/..%2f..%2f..%2fv1/models`,
        ]) {
          const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
            const req = httpRequest(
              `${platform.webUrl}${path}`,
              { headers: { cookie: owner.cookie }, timeout: 30_000 },
              (res) => {
                let body = '';
                res.on('data', (c) => {
                  body += c;
                });
                res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
              },
            );
            req.on('error', reject);
            req.end();
          });
          received.push(answer.body);
          // The edge resolves dot segments itself (the console's page then answers /v1/models); the proxy checks again below.
          t.notMatch(
            answer.body,
            /"object"\s*:\s*"list"|OpenClaw/,
            `${path}: not answered by the gateway (${answer.status})`,
          );
        }
      },
    );

    await t.test(
      'in Chromium, the real Control UI loads through the proxy and connects',
      { skip: !process.env.CHROMIUM_PATH && 'no Chromium (infra/browser/up.sh)' },
      async (t) => {
        // Debian's Chromium as test/support/browser.ts starts it; the public origin answered from the test's edge.
        const browser = await chromium.launch({
          executablePath: process.env.CHROMIUM_PATH!,
          headless: true,
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-background-networking',
            '--disable-component-update',
            '--no-first-run',
          ],
        });
        const context = await browser.newContext({
          baseURL: platform.env.PUBLIC_BASE_URL!,
          permissions: ['local-network-access'],
        });
        // The page still loads modules when the test ends: those requests are dropped, not failed.
        t.teardown(async () => {
          await context.unrouteAll({ behavior: 'ignoreErrors' });
          await browser.close();
        });
        await context.route(
          (url) => url.origin === publicOrigin,
          async (route) => {
            const response = await route.fetch({
              url: platform.webUrl + route.request().url().slice(publicOrigin.length),
              maxRedirects: 0,
              timeout: 60_000,
            });
            await route.fulfill({ response });
          },
        );
        await context.addCookies([
          { name: 'agentyard-session', value: owner.cookie.split('=')[1]!, url: platform.env.PUBLIC_BASE_URL! },
        ]);
        let requests = 0;
        context.on('request', (request) => {
          if (request.url().includes(base)) requests += 1;
        });
        context.on('response', async (response) => {
          if (!response.url().includes(base)) return;
          received.push(JSON.stringify(await response.allHeaders()), await response.text().catch(() => ''));
        });
        // The page's WebSocket goes to the public origin; it is carried to the test's edge as the browser opened it (its cookie and origin).
        const toPage: string[] = [];
        await context.routeWebSocket(
          (url) => url.pathname.startsWith(base),
          (route) => {
            const edge = new WebSocket(`${platform.webUrl.replace('http', 'ws')}${new URL(route.url()).pathname}`, {
              headers: { cookie: owner.cookie, origin: publicOrigin },
            });
            const early: string[] = [];
            route.onMessage((message) => {
              if (edge.readyState === WebSocket.OPEN) edge.send(message);
              else early.push(String(message));
            });
            edge.on('open', () => {
              for (const message of early.splice(0)) edge.send(message);
            });
            edge.on('message', (data, binary) => {
              const text = data.toString();
              if (!binary) toPage.push(text);
              route.send(binary ? (data as Buffer) : text);
            });
            edge.on('close', (code, reason) =>
              route.close({ code: code === 1005 || code === 1006 ? 1000 : code, reason: reason.toString() }),
            );
            edge.on('error', (error) => {
              toPage.push(`relay: ${error.message}`);
              route.close({ code: 1011, reason: 'relay failed' });
            });
            route.onClose(() => edge.close());
          },
        );
        const page = await context.newPage();
        const pageErrors: string[] = [];
        page.on('pageerror', (error) => pageErrors.push(error.message));
        const cspViolations: string[] = [];
        page.on('console', (message) => {
          if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
        });
        await page.goto(`${base}/`);
        const helloOk = () => toPage.some((text) => /"type":"hello-ok"/.test(text));
        const deadline = Date.now() + 120_000;
        while (!helloOk() && Date.now() < deadline)
          await page.waitForEvent('websocket', { timeout: 5000 }).catch(() => undefined);
        t.ok(helloOk(), "the Control UI's own connect, without a token, got the gateway's hello-ok through the proxy");
        received.push(...toPage);
        await page.locator('openclaw-app').waitFor({ state: 'attached', timeout: 60_000 });
        t.ok(
          toPage.some((text) => /"type":"res"/.test(text) && !/hello-ok/.test(text)),
          'and its method calls are answered over the relayed connection',
        );
        await mkdir(join(repoRoot, 'test-artifacts', 'control-ui'), { recursive: true });
        await page.screenshot({ path: join(repoRoot, 'test-artifacts', 'control-ui', 'control-ui.png') });
        t.ok(requests < 600, `a load is ${requests} requests: within web-control-ui's 600 a minute`);
        t.same(
          pageErrors.filter((e) => /token|unauthori/i.test(e)),
          [],
          'no auth error on the page',
        );
        t.same(cspViolations, [], 'the page works within its CSP (nothing it needs is blocked)');
      },
    );

    await t.test('the gateway token is in nothing the client received', async (t) => {
      t.ok(received.length > 10, `${received.length} headers, bodies and frames received`);
      t.notOk(
        received.some((text) => text.includes(gatewayToken)),
        'not once',
      );
    });
  },
);
