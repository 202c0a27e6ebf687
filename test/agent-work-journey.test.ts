import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { type Delivered, systemDb, uniqueEmail } from '@agentyard/testing';
import { startAgentJourney } from './support/agent-journey.ts';
import { noAgentContainers } from './support/containers.ts';
import { observe, registerAndVerify } from './support/journey.ts';

// Issue 19's routes as a user meets them, on the platform as `npm start` runs it (every service and
// worker, the edge with its agent listener, the real OpenClaw image in the container engine), with a
// real SMTP server and a local OpenAI-wire model server as the AI gateway's only provider: chat with
// the agent, read its history and logs, give it a file it then reads, see its metrics, stream a turn,
// and nobody else sees any of it. Heavy (~1.4 GB, a core for a minute while the gateway boots): one
// agent, removed when the test ends.
t.setTimeout(1_500_000);

const skip = noAgentContainers;

/** The messages of a model request, as the agent sent them. */
const messagesOf = (d: Delivered) => (d.body.messages ?? []) as { role: string; content: unknown }[];
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

/** Server-Sent Events of a whole answer: each block's event name and parsed data. */
const eventsOf = (body: string) =>
  body
    .split('\n\n')
    .filter((block) => /^event: /m.test(block))
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)![1]!,
      data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>,
    }));

t.test(
  'a user chats with their agent through the edge, reads its history and logs, gives it a file, sees its metrics, and nobody else can',
  { skip },
  async (t) => {
    const journey = await startAgentJourney(t, {
      AGENT_PORT_RANGE: '39000-39499',
      // The sampler's passes every 2 s, so the metrics route has points within the test.
      AGENT_METRICS_INTERVAL_MS: '2000',
    });
    const { docker, ours, model, platform } = journey;

    // 1. Sign up, verify, pay for collective (its agents have the `coding` tools: they can read their files), provision.
    const { web, userId: owner } = await journey.subscriber('agent-work', 'collective');
    const provisioned = await web.request('POST', '/api/agents/provision', { name: 'Quince' });
    t.equal(provisioned.status, 201, 'provisioning accepted');
    const { agent } = (await provisioned.json()) as { agent: { id: string } };
    journey.removeAtEnd(agent.id, owner);
    const status = async () => {
      const res = await web.request('GET', `/api/agents/${agent.id}`);
      return res.status === 200
        ? ((await res.json()) as { agent: { status: string } }).agent.status
        : `HTTP ${res.status}`;
    };
    const settled = await observe(status, (s) => s !== 'provisioning' && s !== 'HTTP 429', {
      everyMs: 1000,
      deadlineMs: 540_000,
      what: 'the agent leaving provisioning',
    });
    if (!t.equal(settled, 'running', 'the agent runs')) return;
    t.same(
      (await ours()).map((c) => [c.Image, c.State]),
      [[DEFAULT_AGENT_IMAGE, 'running']],
      'one container of the real OpenClaw image',
    );
    const turn = (message: string, headers: Record<string, string> = {}) =>
      web.request('POST', '/api/chat', { agentId: agent.id, message }, { headers, timeoutMs: 240_000 });

    // 2. A question: the agent's answer is the model server's, reached through the platform's AI gateway.
    const question = `Which quince jam is best? (${randomBytes(4).toString('hex')})`;
    const asked = await turn(question);
    t.equal(asked.status, 200, 'the chat turn is answered');
    const reply = (await asked.json()) as {
      agentId: string;
      sessionKey: string;
      message: { role: string; content: string };
    };
    t.match(
      reply,
      {
        agentId: agent.id,
        sessionKey: `agentyard:web:${owner}`,
        message: { role: /^assistant$/, content: 'Hello from the local provider' },
      },
      "with the model server's words",
    );
    const call = await model.delivery(
      (d) => messagesOf(d).some((m) => m.role === 'user' && textOf(m.content).includes(question)),
      1000,
    );
    t.equal(call.path, '/openai/v1/chat/completions', 'the model server got the question');
    t.equal(
      call.headers.authorization,
      `Bearer ${model.env.OPENAI_API_KEY}`,
      "with the platform's provider key: through the AI gateway, not from the agent",
    );

    // 3. History: both turns of the session, from the agent's gateway.
    const history = await web.request('GET', `/api/chat?agentId=${agent.id}`);
    t.equal(history.status, 200, 'the history is read');
    const { messages } = (await history.json()) as { messages: { role: string; content: string }[] };
    t.ok(
      messages.some((m) => m.role === 'user' && m.content.includes(question)),
      "the user's turn",
    );
    t.equal(messages.at(-1)?.role, 'assistant', "the agent's turn last");
    t.equal(messages.at(-1)?.content, 'Hello from the local provider', "the agent's answer, newest last");

    // 4. Logs: the gateway's start is there, its secrets are not.
    const row = await systemDb()
      .selectFrom('agents')
      .select(['container_id', 'gateway_token_sealed', 'hooks_token_sealed'])
      .where('id', '=', agent.id)
      .executeTakeFirstOrThrow();
    const keyring = parseKeyring(platform.env.ENCRYPTION_KEYS!);
    const binds = (await docker.getContainer(row.container_id!).inspect()).HostConfig.Binds ?? [];
    const configDir = binds.map((b) => b.split(':')).find(([, inside]) => inside === '/run/agentyard')![0]!;
    const secrets = {
      'gateway token': openAgentSecret(keyring, agent.id, 'gateway-token', row.gateway_token_sealed!),
      'hooks token': openAgentSecret(keyring, agent.id, 'hooks-token', row.hooks_token_sealed!),
      'AI key': /"(ag_[A-Za-z0-9_-]+)"/.exec(await readFile(join(configDir, 'openclaw.json'), 'utf8'))![1]!,
    };
    const logs = await web.request('GET', `/api/logs/${agent.id}/history?lines=1000`);
    t.equal(logs.status, 200, 'the logs are read');
    const lines = ((await logs.json()) as { lines: { stream: string; text: string }[] }).lines;
    t.ok(
      lines.some((l) => l.text.includes('[gateway]') && l.text.includes('http server listening')),
      "the gateway's start is in its logs",
    );
    t.notOk(
      lines.some((l) => l.text.includes('\u001b')),
      "as text: OpenClaw's colour codes are taken out",
    );
    const logText = lines.map((l) => l.text).join('\n');
    for (const [name, secret] of Object.entries(secrets)) t.notOk(logText.includes(secret), `no ${name} in the logs`);

    // 5. A file the user uploads, then asks about: the agent reads it with its `read` tool, and the file's
    // content reaches the model as that tool's result.
    const fileName = `recipe-${randomBytes(4).toString('hex')}.txt`;
    const recipe = `Quince jam: 1 kg quinces, 800 g sugar, lemon ${randomBytes(6).toString('hex')}.\n`;
    const uploaded = await web.request('POST', `/api/files?agentId=${agent.id}&path=uploads/${fileName}`, recipe, {
      headers: { 'content-type': 'text/plain' },
    });
    t.equal(uploaded.status, 201, 'the file is uploaded');
    t.has(
      await uploaded.json(),
      { agentId: agent.id, path: `uploads/${fileName}`, size: Buffer.byteLength(recipe) },
      'whole',
    );
    const listed = await web.request('GET', `/api/files?agentId=${agent.id}`);
    t.has(
      await listed.json(),
      { path: 'uploads', entries: [{ name: fileName, type: 'file', size: Buffer.byteLength(recipe) }] },
      'and listed in uploads/',
    );
    t.equal(
      await (await web.request('GET', `/api/files?agentId=${agent.id}&path=uploads/${fileName}&download=1`)).text(),
      recipe,
      'and downloaded as it was',
    );
    // The model decides to read the file the user names, until a tool's result follows the question.
    // (OpenClaw sends its own context as a user message after the user's.)
    const readPending = (d: Delivered) => {
      const messages = messagesOf(d);
      const asked = messages.findLastIndex((m) => m.role === 'user' && textOf(m.content).includes(fileName));
      return asked >= 0 && !messages.slice(asked).some((m) => m.role === 'tool');
    };
    model.callTool = (d) => (readPending(d) ? { name: 'read', arguments: { path: `uploads/${fileName}` } } : undefined);
    const aboutFile = await turn(`What does the file uploads/${fileName} say?`);
    model.callTool = undefined;
    t.equal(aboutFile.status, 200, 'the turn about the file is answered');
    t.match(
      await aboutFile.json(),
      { message: { content: 'Hello from the local provider' } },
      "with the model's answer after the tool",
    );
    const offered = await model.delivery(readPending, 1000);
    t.ok(
      ((offered.body.tools ?? []) as { function?: { name?: string } }[]).some((tool) => tool.function?.name === 'read'),
      'the agent offers the model its read tool',
    );
    const toolResult = await model.delivery(
      (d) => messagesOf(d).some((m) => m.role === 'tool' && textOf(m.content).includes(recipe.trim())),
      1000,
    );
    t.ok(toolResult, "the read tool's result, sent back to the model, is the uploaded file's content");

    // 6. Metrics: the sampler's points and the model calls of the turns.
    type Point = { cpuPercent: number | null; memoryBytes: number | null; messages: number | null };
    const metrics = await observe(
      async () =>
        (await (await web.request('GET', `/api/metrics?agentId=${agent.id}&range=1h`)).json()) as {
          points?: Point[];
          summary?: { uptimePercent: number | null; messages: number };
        },
      (m) => (m.points ?? []).some((p) => (p.memoryBytes ?? 0) > 0) && (m.summary?.messages ?? 0) >= 3,
      { everyMs: 1000, deadlineMs: 60_000, what: "the agent's metrics" },
    );
    t.ok(
      metrics.points!.some((p) => (p.memoryBytes ?? 0) > 0 && typeof p.cpuPercent === 'number'),
      "points with the container's memory and CPU",
    );
    t.ok(metrics.summary!.messages >= 3, `the model calls of the turns: ${metrics.summary!.messages}`);
    // A sample whose stats call times out on a busy machine counts as down: the share, not 100, is asserted.
    t.ok(
      (metrics.summary!.uptimePercent ?? 0) > 0,
      `the container's uptime from the samples: ${metrics.summary!.uptimePercent}%`,
    );

    // 7. A streamed turn: deltas, then done with the whole answer.
    const streamed = await turn('Stream the answer, please.', { accept: 'text/event-stream' });
    t.equal(streamed.status, 200, 'the streamed turn is answered');
    t.match(streamed.headers.get('content-type'), /^text\/event-stream/, 'as Server-Sent Events through the edge');
    const events = eventsOf(await streamed.text());
    t.equal(events.at(-1)?.event, 'done', 'the stream ends in done');
    t.match(
      events.at(-1)?.data,
      { agentId: agent.id, message: { role: /^assistant$/, content: 'Hello from the local provider' } },
      'with the whole answer',
    );
    t.equal(
      events
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.content)
        .join(''),
      'Hello from the local provider',
      'the deltas make the answer',
    );

    // 8. Another user: none of it exists for them.
    const stranger = journey.client();
    t.equal(
      (await registerAndVerify(stranger, journey.mailbox, uniqueEmail('agent-work-stranger'), 'a stranger password'))
        .verified,
      200,
      'another user signs up',
    );
    for (const [method, path, body] of [
      ['POST', '/api/chat', { agentId: agent.id, message: 'hello?' }],
      ['GET', `/api/chat?agentId=${agent.id}`],
      ['GET', `/api/logs/${agent.id}/history`],
      ['GET', `/api/files?agentId=${agent.id}`],
      ['GET', `/api/files?agentId=${agent.id}&path=uploads/${fileName}&download=1`],
      ['GET', `/api/metrics?agentId=${agent.id}`],
    ] as const) {
      t.equal(
        (await stranger.request(method, path, body)).status,
        404,
        `${method} ${path.replace(agent.id, ':agentId')}: 404 for another user`,
      );
    }

    // 9. The agent is deleted: no container left.
    const removed = await fetch(`${platform.backendUrl}/api/agents/${agent.id}`, {
      method: 'DELETE',
      signal: AbortSignal.timeout(60_000),
      headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
    });
    t.same(await removed.json(), { id: agent.id, deleted: true }, 'the agent is deleted');
    t.same(await ours(), [], 'no container left');
  },
);
