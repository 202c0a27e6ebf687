import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { DEFAULT_AGENT_IMAGE, allowAgentListener } from '@agentyard/runtime';
import {
  type Delivered,
  startLocalProviders,
  startMailServer,
  startTelegramServer,
  startWholePlatform,
  systemDb,
  uniqueEmail,
} from '@agentyard/testing';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy, signIn } from './support/browser.ts';
import { noAgentContainers, runContainers } from './support/containers.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from './support/journey.ts';

// Issue 29's channels as a user meets them, on the platform as `npm start` runs it, with the real
// OpenClaw image: the owner connects a Telegram bot through the API; the agent's real Telegram
// channel long-polls a local server speaking the Bot API (reached through the development setting
// AGENT_TELEGRAM_API_ROOT, OpenClaw's channels.telegram.apiRoot); a message from a Telegram user the
// DM policy allows is answered by the agent through the platform's AI gateway (a local model server),
// the reply arrives at sendMessage and its cost is in the owner's usage; the bot token is nowhere but
// the vault and the agent's token file; disconnecting stops the polling. Heavy: one agent.
t.setTimeout(1_500_000);

type Channel = {
  channel: string;
  enabled: boolean;
  status: string;
  detail: string;
  credentialHint: string;
  dmPolicy?: string;
  allowFrom?: string[];
};
const messagesOf = (d: Delivered) => (d.body.messages ?? []) as { role: string; content: unknown }[];
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

t.test(
  'an owner connects a Telegram bot: a Telegram user allowed by the DM policy gets the agent’s answer; the token stays in the vault; disconnecting stops the polling',
  { skip: noAgentContainers },
  async (t) => {
    const { own, docker, removeOurs } = runContainers();
    const host = process.env.EDGE_AGENT_HOST!;
    const model = await startLocalProviders(t);
    const mailbox = await startMailServer(t);
    // The agent container reaches the Bot API server as it reaches the edge's agent listener: on the host's address, allowed by the host's egress rules.
    const telegram = await startTelegramServer({ host });
    const withdraw = await allowAgentListener(host, Number(new URL(telegram.url).port));
    const processes = ['edge', 'agents', 'agents worker', 'ai', 'ai worker', 'auth'];
    const platform = await startWholePlatform(
      {
        RUNTIME_INSTANCE: own,
        AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
        AGENT_PORT_RANGE: '39500-39999',
        AGENT_READY_TIMEOUT_MS: '420000',
        AGENT_TELEGRAM_API_ROOT: telegram.url,
        OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
        OPENAI_API_KEY: model.env.OPENAI_API_KEY,
        SMTP_URL: mailbox.url,
        BILLING_PROVIDER: 'local',
      },
      { listenTimeoutMs: 180_000, logsOf: processes },
    );
    const agents: string[] = [];
    let owner = '';
    const backend = (method: string, path: string) =>
      fetch(`${platform.backendUrl}${path}`, {
        method,
        signal: AbortSignal.timeout(60_000),
        headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
      });
    t.teardown(async () => {
      for (const id of agents) await backend('DELETE', `/api/agents/${id}`).catch(() => undefined);
      await platform.stop();
      await removeOurs();
      await telegram.close();
      await withdraw();
    });

    // 1. A paying owner and a running agent.
    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    const email = uniqueEmail('channels');
    const password = 'a channels journey password';
    owner = (await registerAndVerify(web, mailbox, email, password)).userId;
    t.equal(await payAtLocalCheckout(web, 'collective'), 303, 'subscribed to collective');
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Kestrel' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const { id } = ((await provisioned.json()) as { agent: { id: string } }).agent;
    agents.push(id);
    const status = async () => {
      const res = await web.request('GET', `/api/agents/${id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string } }).agent.status
        : `HTTP ${res.status}`;
    };
    if (
      !t.equal(
        await observe(status, (s) => s !== 'provisioning' && s !== 'deploying', {
          everyMs: 1000,
          deadlineMs: 600_000,
          what: 'the agent running',
        }),
        'running',
        'the agent runs',
      )
    )
      return;
    const channels = async () => {
      const res = await web.request('GET', `/api/agents/${id}/channels`, undefined, { timeoutMs: 60_000 });
      return res.status === 200 ? ((await res.json()) as { channels: Channel[] }).channels : [];
    };
    t.same(await channels(), [], 'no channel yet');

    // 2. What is refused changes nothing: another user's agent, a channel this image cannot run, a malformed token, an open policy without "*".
    const stranger = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
    await registerAndVerify(stranger, mailbox, uniqueEmail('channels-stranger'), 'a stranger password here');
    t.equal(
      (await stranger.request('PUT', `/api/agents/${id}/channels/telegram`, { botToken: telegram.token })).status,
      404,
      "another user's agent is 404",
    );
    t.equal((await stranger.request('GET', `/api/agents/${id}/channels`)).status, 404);
    const discord = await web.request('PUT', `/api/agents/${id}/channels/discord`, {
      botToken: 'a-discord-token-of-the-test',
    });
    t.equal(discord.status, 501, 'Discord: 501');
    t.match(((await discord.json()) as { error: string }).error, /@openclaw\/discord/, 'naming the missing plugin');
    t.equal(
      (await web.request('PUT', `/api/agents/${id}/channels/telegram`, { botToken: 'not a bot token' })).status,
      400,
      'a malformed token: 400',
    );
    t.equal(
      (await web.request('PUT', `/api/agents/${id}/channels/telegram`, { botToken: telegram.token, dmPolicy: 'open' }))
        .status,
      400,
      'open without "*": 400',
    );
    t.equal(
      (await web.request('PUT', `/api/agents/${id}/channels/telegram`, { dmPolicy: 'pairing' })).status,
      400,
      'no token to keep: 400',
    );
    t.same(await channels(), [], 'still no channel');

    // 3. Connect the bot: only Ada (Telegram user 4242) may write to it.
    const ada = { id: 4242, first_name: 'Ada', username: 'ada' };
    const connected = await web.request('PUT', `/api/agents/${id}/channels/telegram`, {
      botToken: telegram.token,
      dmPolicy: 'allowlist',
      allowFrom: [String(ada.id)],
    });
    t.equal(connected.status, 200, 'connected');
    const answer = (await connected.json()) as { channel: Channel };
    t.has(
      answer.channel,
      {
        channel: 'telegram',
        enabled: true,
        status: 'connecting',
        credentialHint: telegram.token.slice(-4),
        dmPolicy: 'allowlist',
        allowFrom: ['4242'],
      },
      'connecting, hinted by its last four characters',
    );
    t.notOk(JSON.stringify(answer).includes(telegram.token), 'the answer holds no token');
    const firstPoll = await telegram.waitForCall(
      (c) => c.method === 'getUpdates' && c.token === telegram.token,
      420_000,
    );
    t.ok(firstPoll, "the agent's real Telegram channel long-polls the Bot API with the bot's token");
    t.ok(
      telegram.calls.some((c) => c.method === 'getMe'),
      'after asking who the bot is (getMe)',
    );
    const live = await observe(channels, (list) => list[0]?.status === 'connected', {
      everyMs: 1000,
      deadlineMs: 240_000,
      what: 'the channel connected',
    });
    t.has(
      live,
      [{ channel: 'telegram', enabled: true, status: 'connected', credentialHint: telegram.token.slice(-4) }],
      "connected, as the agent gateway's own channel status says",
    );

    await t.test(
      "the console's Channels tab shows the bot connected, never its token (Chromium, axe)",
      { skip: noBrowser },
      async (t) => {
        const browser = await launchBrowser(t);
        const context = await consoleContext(browser, {
          webUrl: platform.webUrl,
          publicBaseUrl: platform.env.PUBLIC_BASE_URL!,
        });
        const page = await context.newPage();
        const refusals = watchPolicy(page);
        await signIn(page, email, password);
        await page.goto(`/agents/${id}/channels`);
        await page.getByRole('heading', { name: 'Telegram', level: 2 }).waitFor();
        await page.getByText('Connected', { exact: true }).waitFor();
        t.ok(
          await page.getByText(`…${telegram.token.slice(-4)}`).isVisible(),
          'the token hinted by its last four characters',
        );
        t.notOk((await page.content()).includes(telegram.token), 'never the token itself');
        t.ok(await page.getByRole('button', { name: 'Disconnect Telegram' }).isVisible(), 'a way to disconnect');
        t.equal(
          await page.getByLabel('Direct messages').inputValue(),
          'allowlist',
          'the form starts from the saved policy',
        );
        t.equal(
          await page.getByLabel('Allowed Telegram user ids (comma separated)').inputValue(),
          '4242',
          'and the saved senders',
        );
        const { violations, screenshot } = await checkPage(page, 'agent-channels-journey', 'channels-connected');
        t.same(violations, [], `no serious or critical axe violation (${screenshot})`);
        t.same(refusals, [], 'no Content-Security-Policy refusal');
        await context.close();
      },
    );

    // 4. Ada writes; the agent answers through the platform's AI gateway; the reply arrives at sendMessage.
    const question = `Which kestrel hovers best? (${randomBytes(4).toString('hex')})`;
    telegram.sendPrivateMessage(ada, question);
    const reply = await telegram.waitForCall(
      (c) => c.method === 'sendMessage' && Number(c.params.chat_id) === ada.id,
      300_000,
    );
    t.match(String(reply.params.text), /Hello from the local provider/, "Ada gets the model server's words");
    const call = await model.delivery(
      (d) => messagesOf(d).some((m) => m.role === 'user' && textOf(m.content).includes(question)),
      1000,
    );
    t.equal(
      call.headers.authorization,
      `Bearer ${model.env.OPENAI_API_KEY}`,
      "through the AI gateway, with the platform's provider key",
    );
    type Summary = { usage: { calls: number; costUsd: number } };
    const usage = await observe(
      async () => (await (await web.request('GET', `/api/usage/summary?agentId=${id}&days=1`)).json()) as Summary,
      (s) => s.usage?.calls >= 1,
      { everyMs: 1000, deadlineMs: 120_000, what: "the Telegram turn's usage" },
    );
    t.ok(
      usage.usage.costUsd > 0,
      `its cost is in the owner's usage: ${usage.usage.costUsd} USD over ${usage.usage.calls} call(s)`,
    );

    // 4b. Mission control: the Telegram turn's model calls are `channel` runs, from the AI gateway's rows
    // (OpenClaw names the turn's session and channel in its prompt's runtime line); a console chat turn's are `chat`.
    t.match(
      messagesOf(call)
        .map((m) => textOf(m.content))
        .join('\n'),
      /Runtime: [^\n]*session=agent:main:telegram:direct:4242[^\n]*channel=telegram/,
      "OpenClaw's request names the turn's session and channel",
    );
    type Trace = {
      id: string;
      agentId: string;
      kind: string;
      status: string;
      tokens: number | null;
      costUsd: number | null;
    };
    const traces = async (kind: string) =>
      (
        (await (await web.request('GET', `/api/mission-control/fleet/traces?agentId=${id}&kind=${kind}`)).json()) as {
          traces: Trace[];
        }
      ).traces;
    const onTelegram = await traces('channel');
    t.ok(onTelegram.length >= 1, `the turn's model calls are channel runs (${onTelegram.length})`);
    for (const run of onTelegram) {
      t.match(run, { agentId: id, kind: 'channel', status: 'completed' });
      t.ok(
        (run.tokens ?? 0) > 0 && (run.costUsd ?? 0) > 0,
        `with its tokens (${run.tokens}) and cost (${run.costUsd})`,
      );
    }
    t.same(await traces('chat'), [], 'and no chat run yet');
    const consoleTurn = await web.request(
      'POST',
      '/api/chat',
      { agentId: id, message: 'And from the console?' },
      { timeoutMs: 240_000 },
    );
    t.equal(consoleTurn.status, 200, 'a console chat turn');
    const fromConsole = await observe(
      () => traces('chat'),
      (list) => list.length >= 1,
      { everyMs: 1000, deadlineMs: 120_000, what: "the console turn's usage" },
    );
    t.match(fromConsole[0], { agentId: id, kind: 'chat', status: 'completed' }, 'is a chat run');
    t.equal((await traces('channel')).length, onTelegram.length, 'and no channel run');

    // 5. The token is in the vault (sealed) and the agent's token file (0600), nowhere else.
    const db = systemDb();
    const row = await db.selectFrom('agent_channels').selectAll().where('agent_id', '=', id).executeTakeFirstOrThrow();
    t.notOk(row.credentials_sealed.includes(telegram.token), 'sealed in the vault');
    const agentRow = await db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const binds = ((await docker.getContainer(agentRow.container_id!).inspect()).HostConfig.Binds ?? []).map((b) =>
      b.split(':'),
    );
    const stateDir = binds.find(([, inside]) => inside === '/home/node/.openclaw')![0]!;
    const configDir = binds.find(([, inside]) => inside === '/run/agentyard')![0]!;
    const tokenFile = join(stateDir, 'credentials/agentyard/telegram-bot-token');
    t.equal(await readFile(tokenFile, 'utf8'), telegram.token, 'the token file on the state disk');
    t.equal((await stat(tokenFile)).mode & 0o777, 0o600, 'mode 0600');
    const places: Record<string, string> = {};
    places['the agent row (its configuration)'] = JSON.stringify(agentRow);
    places['config backups'] = JSON.stringify(
      await db.selectFrom('config_backups').selectAll().where('user_id', '=', owner).execute(),
    );
    places["the agent's openclaw.json"] = await readFile(join(configDir, 'openclaw.json'), 'utf8');
    t.match(
      places["the agent's openclaw.json"],
      /"tokenFile": "~\/\.openclaw\/credentials\/agentyard\/telegram-bot-token"/,
      'which names the token file',
    );
    const logs = await web.request('GET', `/api/logs/${id}/history?lines=1000`);
    places['agent logs (API)'] = await logs.text();
    for (const name of processes) places[`${name} logs`] = platform.logs.lines(name).join('\n');
    const redis = new Redis(platform.env.REDIS_URL!);
    let queueData = '';
    for (const key of await redis.keys(`${platform.env.QUEUE_PREFIX}*`)) {
      const type = await redis.type(key);
      if (type === 'hash') queueData += JSON.stringify(await redis.hgetall(key));
      else if (type === 'string') queueData += (await redis.get(key)) ?? '';
      else if (type === 'list') queueData += (await redis.lrange(key, 0, -1)).join('\n');
    }
    redis.disconnect();
    t.ok(queueData.includes(id), 'the queues hold jobs about this agent');
    places['queue job data'] = queueData;
    const taken = await web.request('POST', `/api/agents/${id}/snapshots`, { label: 'with a bot' });
    t.equal(taken.status, 202, 'a snapshot');
    const snapshotId = ((await taken.json()) as { snapshot: { id: string } }).snapshot.id;
    type Listed = { id: string; status: string };
    await observe(
      async () =>
        ((await (await web.request('GET', `/api/agents/${id}/snapshots`)).json()) as { snapshots: Listed[] }).snapshots,
      (list) => list.some((s) => s.id === snapshotId && s.status === 'ready'),
      { everyMs: 1000, deadlineMs: 180_000, what: 'the snapshot taken' },
    );
    const archive = await web.request('GET', `/api/agents/${id}/snapshots/${snapshotId}/download`, undefined, {
      timeoutMs: 120_000,
    });
    t.equal(archive.status, 200, 'downloaded');
    const tar = gunzipSync(Buffer.from(await archive.arrayBuffer()));
    places['snapshot archive'] = tar.toString('latin1');
    t.match(places['snapshot archive'], /"channels":\["telegram"\]/, 'the manifest names the bound channel');
    for (const [where, text] of Object.entries(places))
      t.notOk(text.includes(telegram.token), `no bot token in ${where}`);
    t.notOk(
      places['snapshot archive'].includes(telegram.token.split(':')[1]!),
      'not even its secret half in the snapshot',
    );

    // 6. Disconnect: the vault forgets the token, the agent is rebuilt without the channel, the polling stops.
    const disconnected = await web.request('DELETE', `/api/agents/${id}/channels/telegram`);
    t.equal(disconnected.status, 200);
    t.same(await disconnected.json(), { success: true, channel: 'telegram', disconnected: true });
    t.equal(
      (await db.selectFrom('agent_channels').select('channel').where('agent_id', '=', id).execute()).length,
      0,
      'the vault row is gone',
    );
    // The rebuild removes the old container before it records the new one; its long poll closes with it.
    const rebuilt = await observe(
      async () =>
        (await db.selectFrom('agents').select('container_id').where('id', '=', id).executeTakeFirstOrThrow())
          .container_id,
      (container) => container !== null && container !== agentRow.container_id,
      { everyMs: 1000, deadlineMs: 240_000, what: 'the agent rebuilt without the channel' },
    );
    t.not(rebuilt, agentRow.container_id, 'the agent runs in a new container');
    await telegram.pollsClosed(60_000);
    t.pass('the long poll the old container held is closed');
    const closedAt = Date.now();
    // The rebuilt gateway is ready once its channels have started (OpenClaw starts them before it says so).
    const gatewayUrl = (
      await db.selectFrom('agents').select('gateway_url').where('id', '=', id).executeTakeFirstOrThrow()
    ).gateway_url!;
    const ready = await observe(
      async () =>
        fetch(`${gatewayUrl}/readyz`, { signal: AbortSignal.timeout(10_000) }).then(
          async (res) => ((await res.json()) as { ready?: boolean }).ready === true,
          () => false,
        ),
      (isReady) => isReady,
      { everyMs: 2000, deadlineMs: 600_000, what: 'the rebuilt agent ready' },
    );
    t.ok(ready, 'the rebuilt agent is ready');
    t.equal(await stat(tokenFile).catch(() => null), null, 'the token file is gone from the state disk');
    t.same(
      telegram.calls.filter((c) => c.method === 'getUpdates' && c.at > closedAt),
      [],
      'no getUpdates since: the polling stopped',
    );
    t.same(await channels(), [], 'no channel listed');

    // 7. The agent's deletion takes its vault with it (a new binding first, as /api/provision would leave one).
    t.equal(
      (await web.request('PUT', `/api/agents/${id}/channels/telegram`, { botToken: telegram.token, enabled: false }))
        .status,
      200,
      'bound again, switched off',
    );
    t.equal(
      (await web.request('DELETE', `/api/agents/${id}`, undefined, { timeoutMs: 120_000 })).status,
      200,
      'the owner deletes the agent on the web',
    );
    agents.splice(agents.indexOf(id), 1);
    t.equal(
      (await db.selectFrom('agent_channels').select('channel').where('agent_id', '=', id).execute()).length,
      0,
      'its vault went with it',
    );
  },
);
