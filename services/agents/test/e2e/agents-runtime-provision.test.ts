import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { registry } from '@agentyard/observability';
import { systemDb } from '@agentyard/testing';
import { startAgents, web } from '../agents-harness.ts';

/** A provisioning backend written for the test: answers each call with the next scripted reply. */
async function scriptedBackend(
  t: Test,
  reply: (headers: IncomingHttpHeaders, body: string) => [number, string, string],
) {
  const calls: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      calls.push({ headers: req.headers, body });
      const [status, type, text] = reply(req.headers, body);
      res.writeHead(status, { 'content-type': type }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/provision`, calls };
}

const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');

t.test('/api/provision: a non-JSON backend fails over to the fallback; session identity in headers', async (t) => {
  const html = await scriptedBackend(t, () => [200, 'text/html', '<html>maintenance</html>']);
  const fallback = await scriptedBackend(t, () => [
    200,
    'application/json',
    JSON.stringify({
      success: true,
      url: 'https://rt.example.test/u1',
      subdomain: 'u1',
      streamKey: 'sk-live',
      liveStreamId: 'ls-1',
    }),
  ]);
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    AGENT_IMAGE: gateway,
    PROVISION_BACKEND_URL: html.url,
    PROVISION_FALLBACK_URL: fallback.url,
  });
  const user = await h.subscribedUser();
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/provision',
    headers: web(user),
    payload: { autoProvision: true, agentType: 'business', email: 'someone-else@example.test' },
  });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), {
    success: true,
    userId: user.id,
    url: 'https://rt.example.test/u1',
    subdomain: 'u1',
    streamKey: 'sk-live',
    liveStreamId: 'ls-1',
  });
  t.equal(html.calls.length, 1);
  t.equal(fallback.calls[0]!.headers['x-user-email'], user.email, "the session email, not the body's");
  t.equal(fallback.calls[0]!.headers['x-user-id'], user.id);
  t.notMatch(fallback.calls[0]!.body, /someone-else/, 'the body email is not sent on');
  t.same(
    await systemDb()
      .selectFrom('users')
      .select(['runtime_url', 'runtime_instance_id'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow(),
    { runtime_url: 'https://rt.example.test/u1', runtime_instance_id: null },
    'a subdomain is no instance id',
  );
});

t.test("/api/provision: backends down → the platform's own runtime; the instance routes drive it", async (t) => {
  const down = await scriptedBackend(t, () => [500, 'application/json', '{"error":"down"}']);
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-provision-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_PORT_RANGE: '38000-38999',
    PROVISION_BACKEND_URL: down.url,
  });
  const user = await h.subscribedUser();
  const other = await h.subscribedUser();
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/provision',
    headers: web(user),
    payload: { agentType: 'business' },
  });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.equal(body.status, 'deploying');
  t.match(body.controlUiUrl, /\?gatewayUrl=ws.+&token=.+/);
  t.notOk('subdomain' in body || 'streamKey' in body || 'liveStreamId' in body);
  const instanceId = (
    await systemDb()
      .selectFrom('users')
      .select('runtime_instance_id')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow()
  ).runtime_instance_id!;
  t.match(await h.provisioned(instanceId), /^running/);
  // The worker's metrics, as its operations listener would render them: phases, agents by status, its queue.
  const scraped = await registry.metrics();
  for (const phase of ['queued', 'container', 'gateway-ready', 'total'])
    t.match(
      scraped,
      new RegExp(`provisioning_phase_duration_seconds_count\\{phase="${phase}"\\} [1-9]`),
      `phase ${phase}`,
    );
  t.match(scraped, /agents_by_status\{status="running"\} [1-9]/);
  t.match(scraped, /bullmq_jobs\{queue="provisioning",state="failed"\} \d+/);

  const instance = await h.app.inject({ method: 'GET', url: `/api/instance/${user.id}`, headers: web(user) });
  t.has(instance.json(), { userId: user.id, instanceId, status: 'running', health: 'healthy' });
  t.equal(
    (await h.app.inject({ method: 'GET', url: `/api/instance/${user.id}`, headers: web(other) })).statusCode,
    404,
    "another user's instance is 404",
  );
  t.equal(
    (await h.app.inject({ method: 'POST', url: `/api/instance/${user.id}/stop`, headers: web(other) })).statusCode,
    404,
  );
  const stopped = await h.app.inject({ method: 'POST', url: `/api/instance/${user.id}/stop`, headers: web(user) });
  t.has(stopped.json(), { success: true, status: 'stopped', health: 'stopped' });
  const stats = await h.app.inject({ method: 'GET', url: `/api/instance/${user.id}/stats`, headers: web(user) });
  t.has(stats.json(), { id: instanceId, health: 'stopped' });
  const token = await h.app.inject({ method: 'GET', url: `/api/user/runtime`, headers: web(user) });
  t.match(token.json(), { instanceId, gatewayToken: String });
});

t.test('/api/provision: 502 when every path fails; nothing left provisioning', async (t) => {
  const down = await scriptedBackend(t, () => [200, 'text/plain', 'ok']);
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    AGENT_IMAGE: join(tmpdir(), `missing-${randomBytes(4).toString('hex')}.mjs`),
    PROVISION_BACKEND_URL: down.url,
    PROVISION_FALLBACK_URL: down.url,
  });
  const user = await h.subscribedUser();
  const res = await h.app.inject({ method: 'POST', url: '/api/provision', headers: web(user), payload: {} });
  t.equal(res.statusCode, 502);
  t.match(res.json(), { error: String });
  const rows = await systemDb()
    .selectFrom('agents')
    .select(['status', 'container_id'])
    .where('user_id', '=', user.id)
    .execute();
  t.same(rows, [{ status: 'error', container_id: null }]);
});

t.test(
  '/api/provision: a backend answer that would be stored is checked first; a bad one fails that path',
  async (t) => {
    const instanceId = randomUUID();
    const badId = await scriptedBackend(t, () => [
      200,
      'application/json',
      JSON.stringify({ success: true, url: 'https://rt.example.test/u2', instanceId: 'not-a-uuid' }),
    ]);
    const badUrl = await scriptedBackend(t, () => [
      200,
      'application/json',
      JSON.stringify({ success: true, url: 'javascript:alert(1)', instanceId }),
    ]);
    const h = await startAgents(t, {
      RUNTIME_DRIVER: 'process',
      AGENT_IMAGE: join(tmpdir(), `missing-${randomBytes(4).toString('hex')}.mjs`),
      PROVISION_BACKEND_URL: badId.url,
      PROVISION_FALLBACK_URL: badUrl.url,
    });
    const user = await h.subscribedUser();
    const res = await h.app.inject({ method: 'POST', url: '/api/provision', headers: web(user), payload: {} });
    t.equal(res.statusCode, 502, 'every path failed: both answers were refused and the direct path has no image');
    t.match(res.json(), { error: String });
    t.equal(badId.calls.length + badUrl.calls.length, 2);
    t.same(
      await systemDb()
        .selectFrom('users')
        .select(['runtime_url', 'runtime_instance_id'])
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow(),
      { runtime_url: null, runtime_instance_id: null },
      'nothing of either answer stored',
    );
    t.equal(
      (await h.app.inject({ method: 'GET', url: `/api/instance/${user.id}`, headers: web(user) })).statusCode,
      404,
    );
  },
);

t.test('an instance id stored before answers were checked reads as no instance, not a 500', async (t) => {
  const h = await startAgents(t, { RUNTIME_DRIVER: 'process', AGENT_IMAGE: gateway });
  const user = await h.subscribedUser();
  await systemDb()
    .updateTable('users')
    .set({ runtime_url: 'https://rt.example.test/u3', runtime_instance_id: 'u3' })
    .where('id', '=', user.id)
    .execute();
  const instance = await h.app.inject({ method: 'GET', url: `/api/instance/${user.id}`, headers: web(user) });
  t.equal(instance.statusCode, 404);
  t.match(instance.json(), { error: String });
  t.equal(
    (await h.app.inject({ method: 'GET', url: `/api/instance/${user.id}/stats`, headers: web(user) })).statusCode,
    404,
  );
  const runtime = await h.app.inject({ method: 'GET', url: '/api/user/runtime', headers: web(user) });
  t.equal(runtime.statusCode, 200);
  t.has(runtime.json(), { runtimeUrl: 'https://rt.example.test/u3', instanceId: null, gatewayToken: null });
});

t.test("/api/provision's channel tokens land in the agent's vault, the Telegram one as a token file", async (t) => {
  const down = await scriptedBackend(t, () => [500, 'application/json', '{"error":"down"}']);
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-provision-channels-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_PORT_RANGE: '37000-37999',
    PROVISION_BACKEND_URL: down.url,
  });
  const user = await h.subscribedUser();
  const telegramBotToken = `123456789:AA${randomBytes(18).toString('base64url')}`;
  const discordBotToken = `discord-${randomBytes(12).toString('hex')}`;

  const malformed = await h.app.inject({
    method: 'POST',
    url: '/api/provision',
    headers: web(user),
    payload: { telegramBotToken: 'not a bot token' },
  });
  t.equal(malformed.statusCode, 400, 'a malformed Telegram token refuses the request');
  t.equal(
    (await systemDb().selectFrom('agents').select('id').where('user_id', '=', user.id).execute()).length,
    0,
    'and leaves no agent',
  );

  const res = await h.app.inject({
    method: 'POST',
    url: '/api/provision',
    headers: web(user),
    payload: { telegramBotToken, discordBotToken },
  });
  t.equal(res.statusCode, 200, res.body);
  t.notOk(res.body.includes(telegramBotToken) || res.body.includes(discordBotToken), 'no token in the answer');
  const instanceId = (
    await systemDb()
      .selectFrom('users')
      .select('runtime_instance_id')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow()
  ).runtime_instance_id!;
  t.match(await h.provisioned(instanceId), /^running/);
  const rows = await systemDb()
    .selectFrom('agent_channels')
    .selectAll()
    .where('agent_id', '=', instanceId)
    .orderBy('channel')
    .execute();
  t.same(
    rows.map((r) => [r.channel, r.enabled, r.credential_hint]),
    [
      ['discord', false, discordBotToken.slice(-4)],
      ['telegram', true, telegramBotToken.slice(-4)],
    ],
    'both in the vault: Telegram on, Discord kept off',
  );
  t.notOk(JSON.stringify(rows).includes(telegramBotToken) || JSON.stringify(rows).includes(discordBotToken), 'sealed');
  const listed = await h.app.inject({ method: 'GET', url: `/api/agents/${instanceId}/channels`, headers: web(user) });
  t.equal(listed.statusCode, 200);
  t.match(listed.json(), {
    channels: [
      { channel: /^discord$/, enabled: false, status: /^off$/, detail: /@openclaw\/discord/ },
      { channel: /^telegram$/, enabled: true, credentialHint: telegramBotToken.slice(-4) },
    ],
  });
  t.notOk(listed.body.includes(telegramBotToken), 'no token listed');
  const home = join(dataDir, h.config.RUNTIME_INSTANCE, instanceId, 'home', '.openclaw');
  const tokenFile = join(home, 'credentials/agentyard/telegram-bot-token');
  t.equal(await readFile(tokenFile, 'utf8'), telegramBotToken, 'the Telegram token as a file on the state disk');
  t.equal((await stat(tokenFile)).mode & 0o777, 0o600, 'mode 0600');
  const config = await readFile(join(home, 'openclaw.json'), 'utf8');
  t.notOk(config.includes(telegramBotToken), 'not in the config');
  t.has(
    JSON.parse(config).channels.telegram,
    { enabled: true, tokenFile: '~/.openclaw/credentials/agentyard/telegram-bot-token' },
    'which names the file',
  );
  t.equal(
    (
      await h.app.inject({
        method: 'GET',
        url: `/api/agents/${instanceId}/channels`,
        headers: web(await h.subscribedUser()),
      })
    ).statusCode,
    404,
    'another user: 404',
  );

  // A new PUT rotates the token; one without a token changes the settings and keeps it.
  const rotated = `987654321:AA${randomBytes(18).toString('base64url')}`;
  const put = (payload: Record<string, unknown>) =>
    h.app.inject({ method: 'PUT', url: `/api/agents/${instanceId}/channels/telegram`, headers: web(user), payload });
  const rotation = await put({ botToken: rotated, dmPolicy: 'allowlist', allowFrom: ['4242'] });
  t.equal(rotation.statusCode, 200, rotation.body);
  t.has(rotation.json(), {
    success: true,
    channel: { channel: 'telegram', credentialHint: rotated.slice(-4), dmPolicy: 'allowlist', allowFrom: ['4242'] },
  });
  t.notOk(rotation.body.includes(rotated), 'the new token is not answered back');
  const sealedOf = async () =>
    (
      await systemDb()
        .selectFrom('agent_channels')
        .select('credentials_sealed')
        .where('agent_id', '=', instanceId)
        .where('channel', '=', 'telegram')
        .executeTakeFirstOrThrow()
    ).credentials_sealed;
  const sealed = await sealedOf();
  const settingsOnly = await put({ dmPolicy: 'pairing' });
  t.has(
    settingsOnly.json(),
    { channel: { credentialHint: rotated.slice(-4), dmPolicy: 'pairing' } },
    'settings only: the token kept',
  );
  t.equal(await sealedOf(), sealed, 'the sealed token unchanged');
  t.equal(
    (await put({ botToken: rotated, dmPolicy: 'pairing', extra: true })).statusCode,
    400,
    'an unknown field: 400',
  );
});
