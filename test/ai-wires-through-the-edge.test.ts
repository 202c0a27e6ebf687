import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { Static } from 'typebox';
import { hashToken, randomToken } from '@agentyard/crypto';
import type { UsageCalls, UsageSummary } from '@agentyard/proto-schemas';
import { OPENCLAW_ENTRY } from '@agentyard/runtime';
import { createUserRow, startLocalProviders, startPlatform, systemDb } from '@agentyard/testing';
import { buildAgentGatewayConfig } from '../services/agents/src/domain/gateway/gateway-config.ts';

// The ai service and the edge as npm start runs them; agents reach the gateway on the edge's agent
// listener, and a local server speaks Anthropic's wire with its prompt cache's usage fields.
// Room for the last test's two cold OpenClaw CLI boots (a core each for up to a minute or two when
// the machine is busy: it ran out of 180 s once under CI's load).
t.setTimeout(600_000);
const providers = await startLocalProviders(t);
const platform = await startPlatform(['ai'], {
  ...providers.env,
  USAGE_FLUSH_MS: '50',
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-e2e-ai-wires`,
});
t.teardown(() => platform.stop());

async function agentWithKey(plan: string) {
  const user = await createUserRow({ plan });
  return { user, ...(await agentOf(user.id, 'wires')) };
}

/** One of the user's agents on a Claude model, and the AI key it calls the gateway with. */
async function agentOf(userId: string, name: string) {
  const key = `ag_${randomToken()}`;
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name,
      model: 'anthropic/claude-haiku-4-5',
      tools_profile: 'messaging',
      subdomain: `w-${crypto.randomUUID().slice(0, 8)}`,
      ai_provider: 'anthropic',
      ai_key_hash: hashToken(key),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { key, agentId: agent.id };
}

/** The user's signed-in browser on the web surface: a session cookie and the console's origin on each request. */
async function signedIn(userId: string) {
  const session = randomToken();
  await systemDb()
    .insertInto('sessions')
    .values({ user_id: userId, token_hash: hashToken(session), expires_at: new Date(Date.now() + 3600_000) })
    .execute();
  return (method: string, path: string, body: object) =>
    fetch(`${platform.webUrl}${path}`, {
      method,
      body: JSON.stringify(body),
      headers: {
        cookie: `agentyard-session=${session}`,
        origin: new URL(platform.env.PUBLIC_BASE_URL!).origin,
        'content-type': 'application/json',
      },
    });
}

/** The agent's (or, without one, the user's) usage as the summary reports it, once `calls` calls are in it (the service writes usage in batches). */
async function summaryOnce(
  user: { id: string },
  agentId: string | null,
  calls: number,
): Promise<Static<typeof UsageSummary>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${platform.backendUrl}/api/usage/summary${agentId ? `?agentId=${agentId}` : ''}`, {
      headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': user.id },
    });
    const body = (await res.json()) as Static<typeof UsageSummary>;
    if (res.status !== 200 || body.usage.calls >= calls || Date.now() > deadline) return body;
    await new Promise((resolve) => setTimeout(resolve, 100)); // rows land on the service's next flush (50 ms)
  }
}

t.test(
  "Anthropic's own client on the agent listener: a cached second turn reads the cache and costs less",
  { skip: !platform.agentUrl && 'no agent listener (EDGE_AGENT_HOST unset)' },
  async (t) => {
    const agent = await agentWithKey('collective');
    const client = new Anthropic({ apiKey: agent.key, baseURL: platform.agentUrl, maxRetries: 0, timeout: 30_000 });
    const system = [
      {
        type: 'text' as const,
        text: 'You answer about capitals. '.repeat(300),
        cache_control: { type: 'ephemeral' as const },
      },
    ];
    const first = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 200,
      system,
      messages: [{ role: 'user', content: 'France?' }],
    });
    t.equal(first.content[0]?.type === 'text' && first.content[0].text, 'Hello from the local provider');
    t.ok((first.usage.cache_creation_input_tokens ?? 0) > 0, 'the first turn wrote the cache');
    const second = await client.messages
      .stream({ model: 'claude-haiku-4-5', max_tokens: 200, system, messages: [{ role: 'user', content: 'Italy?' }] })
      .finalMessage();
    t.ok((second.usage.cache_read_input_tokens ?? 0) > 0, 'the streamed second turn read it');
    t.equal(
      providers.delivered.at(-1)!.headers['x-api-key'],
      'test-anthropic-key',
      "the platform's provider key, never the agent's",
    );

    const summary = await summaryOnce(agent.user, agent.agentId, 2);
    t.equal(summary.usage.calls, 2, JSON.stringify(summary));
    t.equal(summary.usage.cacheReadTokens, second.usage.cache_read_input_tokens, 'the summary shows the cache read');
    t.equal(summary.usage.cacheWriteTokens, first.usage.cache_creation_input_tokens);
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['cost_usd', 'cache_read_tokens'])
      .where('agent_id', '=', agent.agentId)
      .orderBy('occurred_at')
      .execute();
    t.ok(
      Number(rows[1]!.cost_usd) < Number(rows[0]!.cost_usd),
      `second turn $${rows[1]!.cost_usd} < first $${rows[0]!.cost_usd}`,
    );

    const refused = await client.messages
      .create({ model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: InstanceType<typeof Anthropic.APIError>) => error);
    t.equal(
      (refused as InstanceType<typeof Anthropic.APIError>).status,
      400,
      'another model is refused, naming the wire’s',
    );
  },
);

t.test(
  "OpenAI's own client on the agent listener: Responses (plain and streamed, the cache read) and embeddings",
  { skip: !platform.agentUrl && 'no agent listener (EDGE_AGENT_HOST unset)' },
  async (t) => {
    const agent = await agentWithKey('solo');
    const client = new OpenAI({
      apiKey: agent.key,
      baseURL: `${platform.agentUrl}/v1`,
      maxRetries: 0,
      timeout: 30_000,
    });
    const instructions = 'Answer about capitals, briefly. '.repeat(200);
    const first = await client.responses.create({ model: 'gpt-4o-mini', instructions, input: 'France?' });
    t.equal(first.output_text, 'Hello from the local provider');
    const events: string[] = [];
    const stream = await client.responses.create({ model: 'gpt-4o-mini', instructions, input: 'Italy?', stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    t.ok(events.includes('response.output_text.delta'), events.join(', '));
    t.ok((completed?.usage?.input_tokens_details.cached_tokens ?? 0) > 0, 'the second turn read the cache');
    const embedded = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a text'] });
    t.equal(embedded.data.length, 1);

    const summary = await summaryOnce(agent.user, agent.agentId, 3);
    t.equal(summary.usage.calls, 3, JSON.stringify(summary));
    t.equal(summary.usage.cacheReadTokens, completed?.usage?.input_tokens_details.cached_tokens);
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['model', 'cost_usd'])
      .where('agent_id', '=', agent.agentId)
      .orderBy('occurred_at')
      .execute();
    t.ok(
      Number(rows[1]!.cost_usd) < Number(rows[0]!.cost_usd),
      `cached turn $${rows[1]!.cost_usd} < first $${rows[0]!.cost_usd}`,
    );
    t.same(
      rows.map((r) => r.model),
      ['openai/gpt-4o-mini', 'openai/gpt-4o-mini', 'openai/text-embedding-3-small'],
    );
  },
);

t.test(
  "a user's own API key on the web surface: both official clients, the user's plan, and no agent key there",
  async (t) => {
    const user = await createUserRow({ plan: 'collective' });
    const key = `sk_${randomToken()}`;
    await systemDb()
      .insertInto('api_keys')
      .values({ user_id: user.id, name: 'sdk', key_hash: hashToken(key), prefix: key.slice(0, 10) })
      .execute();
    const openai = new OpenAI({ apiKey: key, baseURL: `${platform.webUrl}/v1`, maxRetries: 0, timeout: 30_000 });
    const models = await openai.models.list();
    t.equal(models.data.length, 5, "collective's models");
    const chat = await openai.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    t.equal(chat.choices[0]?.message.content, 'Hello from the local provider');
    const response = await openai.responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    t.equal(response.output_text, 'Hello from the local provider');
    const embedded = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' });
    t.equal(embedded.data.length, 1);
    // Anthropic's client sends `x-api-key`; a user key goes as a bearer (its `authToken`).
    const anthropic = new Anthropic({
      authToken: key,
      apiKey: null,
      baseURL: platform.webUrl,
      maxRetries: 0,
      timeout: 30_000,
    });
    const message = await anthropic.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    t.equal(message.content[0]?.type === 'text' && message.content[0].text, 'Hello from the local provider');
    const summary = await summaryOnce(user, null, 4);
    t.equal(summary.usage.calls, 4, "the user's four calls, billed to the user");

    const agent = await agentWithKey('collective');
    const agentOnWeb = await fetch(`${platform.webUrl}/v1/models`, {
      headers: { authorization: `Bearer ${agent.key}` },
    });
    t.equal(agentOnWeb.status, 401, 'an agent key stays on the agent listener');
    const unknown = await fetch(`${platform.webUrl}/v1/models`, { headers: { authorization: 'Bearer sk_not-a-key' } });
    t.equal(unknown.status, 401);
  },
);

t.test(
  'through the edge: a call that fails on every provider is listed for its owner with each attempt and its status',
  async (t) => {
    const user = await createUserRow({ plan: 'collective' });
    const key = `sk_${randomToken()}`;
    await systemDb()
      .insertInto('api_keys')
      .values({ user_id: user.id, name: 'failing', key_hash: hashToken(key), prefix: key.slice(0, 10) })
      .execute();
    providers.failNext.set('gpt-4o-mini', { status: 503, times: 3 });
    providers.failNext.set('gemini-2.5-flash', { status: 429, times: 3 });
    const failed = await fetch(`${platform.webUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    t.equal(failed.status, 500, 'every provider failed');
    await summaryOnce(user, null, 1);

    const session = randomToken();
    await systemDb()
      .insertInto('sessions')
      .values({ user_id: user.id, token_hash: hashToken(session), expires_at: new Date(Date.now() + 3600_000) })
      .execute();
    const list = (query: string, authorization: Record<string, string> = { cookie: `agentyard-session=${session}` }) =>
      fetch(`${platform.webUrl}/api/usage/calls${query}`, { headers: authorization });
    const res = await list('?outcome=failed');
    t.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as Static<typeof UsageCalls>;
    t.equal(body.calls.length, 1);
    t.has(body.calls[0], {
      agentId: null,
      model: 'openai/gpt-4o-mini',
      outcome: 'failed',
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
    });
    t.same(
      body.calls[0]!.attempts.map((a) => `${a.provider} ${a.model} ${a.status} ${a.outcome}`),
      [
        ...Array(3).fill('openai openai/gpt-4o-mini 503 failed'),
        ...Array(3).fill('gemini google/gemini-2.5-flash 429 failed'),
      ],
      'each attempt with its provider status',
    );
    const withKey = (await (await list('?outcome=failed', { authorization: `Bearer ${key}` })).json()) as Static<
      typeof UsageCalls
    >;
    t.same(
      withKey.calls.map((c) => c.id),
      [body.calls[0]!.id],
      'the same list with the sk_ key',
    );
    t.same(await (await list('?outcome=served')).json(), { calls: [], nextCursor: null }, 'no call was served');

    const stranger = await createUserRow({ plan: 'collective' });
    const strangerSession = randomToken();
    await systemDb()
      .insertInto('sessions')
      .values({
        user_id: stranger.id,
        token_hash: hashToken(strangerSession),
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
    t.same(
      await (await list('', { cookie: `agentyard-session=${strangerSession}` })).json(),
      { calls: [], nextCursor: null },
      "no one else's calls",
    );
    t.equal((await list('', {})).status, 401, 'signed-in users only');
    for (const query of [
      '?outcome=nope',
      '?cursor=%21%21',
      '?limit=1000',
      '?since=2026-11-28T00:00:00Z&until=2026-11-27T00:00:00Z',
    ]) {
      const bad = await list(query);
      t.equal(bad.status, 400, query);
      t.type(((await bad.json()) as { error: unknown }).error, 'string');
    }
    t.same(
      ((await (await list('')).json()) as Static<typeof UsageCalls>).calls.map((c) => c.id),
      [body.calls[0]!.id],
      'nothing changed',
    );
  },
);

t.test(
  "through the edge: an owner's request limit on one of their API keys refuses its next call with 429 while their other key is served",
  async (t) => {
    const user = await createUserRow({ plan: 'collective' });
    const keyRow = async (name: string) => {
      const key = `sk_${randomToken()}`;
      const row = await systemDb()
        .insertInto('api_keys')
        .values({ user_id: user.id, name, key_hash: hashToken(key), prefix: key.slice(0, 10) })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { key, id: row.id };
    };
    const paced = await keyRow('paced');
    const other = await keyRow('other');
    const owner = await signedIn(user.id);
    // Set before the key's first call, so no process holds an older answer.
    const limited = await owner('PUT', `/api/keys/${paced.id}/limits`, { requestsPerMinute: 1, tokensPerMinute: null });
    t.equal(limited.status, 200, await limited.clone().text());

    const ask = (key: string) =>
      fetch(`${platform.webUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
    t.equal((await ask(paced.key)).status, 200, 'the first call of the minute is served');
    const refused = await ask(paced.key);
    t.equal(refused.status, 429);
    t.ok(Number(refused.headers.get('retry-after')) >= 1, `Retry-After: ${refused.headers.get('retry-after')}`);
    t.has(await refused.json(), { code: 'KEY_RATE_LIMITED' });
    t.equal((await ask(other.key)).status, 200, "the owner's other key is served");
  },
);

t.test(
  "through the edge: an owner's token limit refuses one agent's next call with 429 while its sibling is served, and their own key is used and charged nothing",
  { skip: !platform.agentUrl && 'no agent listener (EDGE_AGENT_HOST unset)' },
  async (t) => {
    const paced = await agentWithKey('collective');
    const sibling = await agentOf(paced.user.id, 'sibling');
    const owner = await signedIn(paced.user.id);
    // Set before the owner's first call, so no process holds an older answer.
    const limited = await owner('PUT', `/api/agents/${paced.agentId}/limits`, {
      requestsPerMinute: null,
      tokensPerMinute: 10,
    });
    t.equal(limited.status, 200, await limited.clone().text());
    const ownKey = `sk-ant-own-${randomToken(12)}`;
    const stored = await owner('PUT', '/api/billing/provider-keys/anthropic', { apiKey: ownKey });
    t.has(await stored.json(), { provider: 'anthropic', hint: ownKey.slice(-4) });

    const ask = (key: string) =>
      fetch(`${platform.agentUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-haiku-4-5',
          max_tokens: 50,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
    t.equal((await ask(paced.key)).status, 200, 'served under the limit, spending it');
    t.equal(providers.delivered.at(-1)!.headers['x-api-key'], ownKey, "the provider saw the owner's own key");
    const refused = await ask(paced.key);
    t.equal(refused.status, 429);
    t.ok(Number(refused.headers.get('retry-after')) >= 1, `Retry-After: ${refused.headers.get('retry-after')}`);
    t.has(await refused.json(), { code: 'AGENT_RATE_LIMITED' });
    t.equal((await ask(sibling.key)).status, 200, "the owner's other agent is served");

    const summary = await summaryOnce(paced.user, null, 2);
    t.equal(summary.usage.calls, 2, 'both served calls are recorded');
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['cost_usd', 'agent_id'])
      .where('user_id', '=', paced.user.id)
      .execute();
    t.same(
      rows.map((r) => [r.agent_id === sibling.agentId ? 'sibling' : 'paced', Number(r.cost_usd)]).sort(),
      [
        ['paced', 0],
        ['sibling', 0],
      ],
      'on their own key: charged nothing',
    );
  },
);

// The real OpenClaw (the agent image's own install) with the configuration provisioning writes for a
// Claude model, one embedded turn at a time (`openclaw agent exec`): its Anthropic adapter marks the
// prompt for caching and reaches /v1/messages on the agent listener, and its second turn reads the
// cache its first wrote.
const noOpenClaw =
  !existsSync(OPENCLAW_ENTRY) &&
  `OpenClaw is not installed at ${OPENCLAW_ENTRY} (infra/agent-image/build.sh installs it)`;
t.test(
  "OpenClaw on a Claude model: the agent's second turn reads the prompt cache and costs less",
  { skip: noOpenClaw || (!platform.agentUrl && 'no agent listener') },
  async (t) => {
    const agent = await agentWithKey('collective');
    const home = await mkdtemp(join(tmpdir(), 'agentyard-openclaw-claude-'));
    t.teardown(() => rm(home, { recursive: true, force: true }));
    const config = buildAgentGatewayConfig({
      agentId: agent.agentId,
      modelId: 'anthropic/claude-haiku-4-5',
      toolsProfile: 'messaging',
      gatewayToken: randomToken(),
      hooksToken: randomToken(),
      aiKey: agent.key,
      aiGatewayUrl: platform.agentUrl!,
      consoleOrigin: platform.webUrl,
      userConfig: {},
    });
    await mkdir(join(home, '.openclaw', 'workspace'), { recursive: true });
    const configPath = join(home, '.openclaw', 'openclaw.json');
    await writeFile(configPath, JSON.stringify(config));
    const turn = (message: string) =>
      promisify(execFile)(
        process.execPath,
        [OPENCLAW_ENTRY, 'agent', 'exec', '--config', configPath, '--json', message],
        {
          cwd: join(home, '.openclaw', 'workspace'),
          env: { HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin' },
          timeout: 240_000,
        },
      ).catch((error: { stdout?: string; stderr?: string }) => ({
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
      }));
    const before = providers.delivered.length;
    const first = await turn('Say hello.');
    t.match(
      first.stdout,
      /Hello from the local provider/,
      `the first turn is answered: ${first.stdout.slice(-400)} ${first.stderr.slice(-800)}`,
    );
    const second = await turn('Say hello again.');
    t.match(
      second.stdout,
      /Hello from the local provider/,
      `the second turn is answered: ${second.stderr.slice(-800)}`,
    );
    const calls = providers.delivered.slice(before).filter((d) => d.path === '/anthropic/v1/messages');
    t.ok(calls.length >= 2, `OpenClaw's turns reached Anthropic's wire (${calls.length} calls)`);
    t.match(JSON.stringify(calls[0]!.body), /"cache_control"/, "OpenClaw marked its prompt for Anthropic's cache");
    const summary = await summaryOnce(agent.user, agent.agentId, calls.length);
    t.ok(summary.usage.cacheReadTokens > 0, `the usage summary shows cache reads (${summary.usage.cacheReadTokens})`);
    const rows = await systemDb()
      .selectFrom('usage_events')
      .select(['cost_usd', 'cache_read_tokens', 'cache_write_tokens'])
      .where('agent_id', '=', agent.agentId)
      .orderBy('occurred_at')
      .execute();
    t.ok(Number(rows.at(-1)!.cache_read_tokens) > 0, 'the second turn read the cache');
    t.ok(
      Number(rows.at(-1)!.cost_usd) < Number(rows[0]!.cost_usd),
      `second turn $${rows.at(-1)!.cost_usd} < first $${rows[0]!.cost_usd}`,
    );
  },
);
