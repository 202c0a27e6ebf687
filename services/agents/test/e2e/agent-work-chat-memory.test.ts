import t from 'tap';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPENCLAW_ENTRY } from '@agentyard/runtime';
import { backend, startAgents, web } from '../agents-harness.ts';
import { modelServer } from '../support/model-server.ts';

// The real OpenClaw gateway (process driver) with an OpenAI-compatible model server written here:
// the web chat runs real turns on the agent's gateway, history comes back from it, and a memory
// written through the platform is in the prompt of the agent's next turn.
t.setTimeout(900_000);

t.test(
  'web chat and memory reach the real gateway',
  { skip: !existsSync(OPENCLAW_ENTRY) && 'OpenClaw is not installed (infra/agent-image/build.sh)' },
  async (t) => {
    let turn = 0;
    const model = await modelServer(t, () => `Answer number ${++turn}.`);
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-agent-work-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const h = await startAgents(t, {
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: dataDir,
      AGENT_IMAGE: OPENCLAW_ENTRY,
      AGENT_PORT_RANGE: '36000-36999',
      AGENT_AI_GATEWAY_URL: model.url,
      AGENT_READY_TIMEOUT_MS: '240000',
    });
    const user = await h.subscribedUser('label');
    const stranger = await h.subscribedUser('label');
    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'Tea maker' },
    });
    t.equal(provisioned.statusCode, 201, provisioned.body);
    const agentId = provisioned.json().agent.id as string;
    t.match(await h.provisioned(agentId, 300_000), /^running/, 'the real gateway is up');
    const chat = (payload: object, headers: Record<string, string> = {}, who = user) =>
      h.app.inject({ method: 'POST', url: '/api/chat', headers: { ...web(who), ...headers }, payload });

    const first = await chat({ agentId, message: 'Which tea do we have?' });
    t.equal(first.statusCode, 200, first.body);
    t.match(
      first.json(),
      {
        agentId,
        sessionKey: `agentyard:web:${user.id}`,
        message: { role: /^assistant$/, content: /^Answer number \d+\.$/ },
      },
      "the model server's answer, through the agent's gateway",
    );
    t.ok(
      model.requests.some((body) => body.includes('Which tea do we have?')),
      'the model server got the message',
    );

    await t.test("memory written through the platform is in the agent's next prompt", async (t) => {
      const content = '# Memory\nThe favourite tea is oolong-7731.\n';
      const written = await h.app.inject({
        method: 'PUT',
        url: '/api/memory',
        headers: web(user),
        payload: { agentId, content },
      });
      t.equal(written.statusCode, 200, written.body);
      t.has(written.json(), { agentId, path: 'MEMORY.md', size: Buffer.byteLength(content) });
      const read = await h.app.inject({ method: 'GET', url: `/api/memory?agentId=${agentId}`, headers: web(user) });
      t.equal(read.statusCode, 200, read.body);
      t.match(read.json(), { agentId, memory: /oolong-7731/, files: [] });
      const before = model.requests.length;
      const asked = await chat({ agentId, message: 'What is my favourite tea?' });
      t.equal(asked.statusCode, 200, asked.body);
      t.ok(
        model.requests.slice(before).some((body) => body.includes('oolong-7731')),
        "the next turn's prompt holds the new memory",
      );
      for (const path of ['../MEMORY.md', '/etc/passwd', 'memory/../../x.md', 'notes/a.md', 'memory/a.txt']) {
        const bad = await h.app.inject({
          method: 'GET',
          url: `/api/memory?agentId=${agentId}&path=${encodeURIComponent(path)}`,
          headers: web(user),
        });
        t.equal(bad.statusCode, 400, `${path}: 400`);
        t.type(bad.json().error, 'string');
      }
      const none = await h.app.inject({
        method: 'GET',
        url: `/api/memory?agentId=${agentId}&path=memory/none.md`,
        headers: web(user),
      });
      t.equal(none.statusCode, 404, 'a memory file that is not there: 404');
    });

    await t.test('a streamed turn ends in done', async (t) => {
      const streamed = await chat({ agentId, message: 'Stream me an answer' }, { accept: 'text/event-stream' });
      t.equal(streamed.statusCode, 200);
      t.match(streamed.headers['content-type'], /text\/event-stream/);
      const events = streamed.body
        .split('\n\n')
        .filter(Boolean)
        .map((block) => ({
          event: /^event: (.*)$/m.exec(block)?.[1],
          data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null'),
        }));
      const done = events.at(-1)!;
      t.equal(done.event, 'done', 'the last event is done');
      t.match(done.data, { agentId, message: { role: /^assistant$/, content: /^Answer number \d+\.$/ } });
      t.equal(
        events
          .filter((e) => e.event === 'delta')
          .map((e) => e.data.content)
          .join(''),
        done.data.message.content,
        'the deltas make the answer',
      );
    });

    await t.test('history comes from the gateway, newest last, in pages', async (t) => {
      const all = await h.app.inject({
        method: 'GET',
        url: `/api/chat?agentId=${agentId}&limit=50`,
        headers: web(user),
      });
      t.equal(all.statusCode, 200, all.body);
      const messages = all.json().messages as { role: string; content: string }[];
      const users = messages.filter((m) => m.role === 'user').map((m) => m.content);
      t.ok(
        users.some((c) => c.includes('Which tea do we have?')) && users.at(-1)?.includes('Stream me an answer'),
        'both turns, newest last',
      );
      t.equal(messages.at(-1)?.role, 'assistant');
      const page1 = await h.app.inject({
        method: 'GET',
        url: `/api/chat?agentId=${agentId}&limit=2`,
        headers: web(user),
      });
      t.same(
        page1.json().messages.map((m: { content: string }) => m.content),
        messages.slice(-2).map((m) => m.content),
        'the newest page',
      );
      t.type(page1.json().nextCursor, 'string');
      const page2 = await h.app.inject({
        method: 'GET',
        url: `/api/chat?agentId=${agentId}&limit=2&cursor=${page1.json().nextCursor}`,
        headers: web(user),
      });
      t.same(
        page2.json().messages.map((m: { content: string }) => m.content),
        messages.slice(-4, -2).map((m) => m.content),
        'the page before it',
      );
      const forged = await h.app.inject({
        method: 'GET',
        url: `/api/chat?agentId=${agentId}&cursor=abc`,
        headers: web(user),
      });
      t.equal(forged.statusCode, 400);
    });

    await t.test('owner only, bad input refused', async (t) => {
      t.equal((await chat({ agentId, message: 'hi' }, {}, stranger)).statusCode, 404, "another user's agent: 404");
      t.equal(
        (await h.app.inject({ method: 'GET', url: `/api/memory?agentId=${agentId}`, headers: web(stranger) }))
          .statusCode,
        404,
      );
      t.equal(
        (await h.app.inject({ method: 'GET', url: `/api/chat?agentId=${agentId}`, headers: web(stranger) })).statusCode,
        404,
      );
      const reserved = await chat({ agentId, message: 'hi', sessionKey: 'cron:x' });
      t.equal(reserved.statusCode, 400);
      t.equal((await chat({ agentId, message: '' })).statusCode, 400);
    });

    await t.test('a stopped agent: 409 AGENT_NOT_RUNNING', async (t) => {
      const stopped = await h.app.inject({
        method: 'POST',
        url: `/api/agents/${agentId}/stop`,
        headers: backend(user),
      });
      t.equal(stopped.statusCode, 200, stopped.body);
      const refused = await chat({ agentId, message: 'are you there?' });
      t.equal(refused.statusCode, 409);
      t.has(refused.json(), { code: 'AGENT_NOT_RUNNING' });
    });
  },
);
