import t from 'tap';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { OPENCLAW_ENTRY } from '@agentyard/runtime';
import { parseKeyring } from '@agentyard/crypto';
import { startAgents, web } from '../agents-harness.ts';
import { modelServer } from '../support/model-server.ts';

// The real OpenClaw gateway (process driver, ~30 s to start, ~1.4 GB): a prompt delivered through
// its hooks runs a turn against an OpenAI-compatible model server written here, and the platform's
// GET /api/agents/:id/messages then shows that exchange, read from the gateway's own transcript.
const OPENCLAW = OPENCLAW_ENTRY;
t.setTimeout(600_000);

t.test(
  "a hook prompt and the agent's answer, read back from the real gateway's transcript",
  { skip: !existsSync(OPENCLAW) && 'OpenClaw is not installed (infra/agent-image/build.sh)' },
  async (t) => {
    const model = await modelServer(t, () => 'Tea is ready.');
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-openclaw-msgs-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const h = await startAgents(t, {
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: dataDir,
      AGENT_IMAGE: OPENCLAW,
      AGENT_PORT_RANGE: '36000-36999',
      AGENT_AI_GATEWAY_URL: model.url,
      AGENT_READY_TIMEOUT_MS: '240000',
      // Right after a turn a fresh gateway on a loaded 2-core machine can take longer than the 10 s
      // default to list its sessions; this file checks what the transcript holds, not how fast.
      AGENT_GATEWAY_READ_TIMEOUT_MS: '90000',
    });
    const user = await h.subscribedUser('label');
    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'Tea maker' },
    });
    t.equal(provisioned.statusCode, 201, provisioned.body);
    const id = provisioned.json().agent.id as string;
    t.match(await h.provisioned(id, 300_000), /^running/, 'the real gateway is up');

    const empty = await h.app.inject({ method: 'GET', url: `/api/agents/${id}/messages`, headers: web(user) });
    t.equal(empty.statusCode, 200, empty.body);
    t.has(
      empty.json(),
      { agentId: id, count: 0, messages: [], status: 'ok', source: 'gateway' },
      'a new agent has said nothing',
    );

    const row = (await h.agentRow(id))!;
    const hooksToken = openAgentSecret(
      parseKeyring(h.config.ENCRYPTION_KEYS),
      id,
      'hooks-token',
      row.hooks_token_sealed!,
    );
    // A 503 is the gateway's "not admitted within 15 s" (its hooks contract: nothing ran, retry); on a
    // loaded machine a fresh gateway can answer it, so the turn is offered again under one idempotency key.
    const runTurn = () =>
      fetch(`${row.gateway_url}/hooks/agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${hooksToken}` },
        body: JSON.stringify({
          message: 'Make me some tea',
          name: 'Scheduler',
          waitForCompletion: true,
          timeoutSeconds: 120,
          idempotencyKey: `tea-${id}`,
        }),
        signal: AbortSignal.timeout(180_000),
      });
    let turn = await runTurn();
    for (let attempt = 1; turn.status === 503 && attempt < 5; attempt++) turn = await runTurn();
    t.equal(turn.status, 200, `the gateway ran the turn (${await turn.clone().text()})`);
    t.ok(
      model.requests.some((body) => body.includes('Make me some tea')),
      'the model server got the prompt',
    );

    // The gateway may touch other sessions (its main one) after the hook run, so which session is
    // "most recent" is not the peer's promise: without a sessionKey the platform reads whichever the
    // gateway lists first, and the exchange is found by what it holds, in the sessions the gateway lists.
    const latest = await h.app.inject({ method: 'GET', url: `/api/agents/${id}/messages`, headers: web(user) });
    t.equal(latest.statusCode, 200, latest.body);
    const { sessionKey, sessions } = latest.json() as {
      sessionKey: string;
      sessions: { key: string; kind: string | null }[];
    };
    t.equal(
      sessionKey,
      sessions[0]?.key,
      'without a sessionKey: the session the gateway lists as most recently active',
    );

    const transcripts = await Promise.all(
      sessions.map(async (session) => {
        const res = await h.app.inject({
          method: 'GET',
          url: `/api/agents/${id}/messages?sessionKey=${encodeURIComponent(session.key)}`,
          headers: web(user),
        });
        t.equal(res.statusCode, 200, `${session.key}: ${res.body.slice(0, 200)}`);
        return { session, messages: (res.json() as { messages: { role: string; text: string }[] }).messages };
      }),
    );
    const hookRun = transcripts.find(({ messages }) =>
      messages.some((m) => m.role === 'user' && /Make me some tea/.test(m.text)),
    );
    t.ok(hookRun, "a session the gateway lists holds the hook's prompt");
    t.not(hookRun?.session.kind, 'main', 'the hook run has a session of its own');
    const turnMessages = hookRun?.messages ?? [];
    const asked = turnMessages.findIndex((m) => m.role === 'user' && /Make me some tea/.test(m.text));
    t.match(
      turnMessages.slice(asked),
      [
        { role: /^user$/, text: /Make me some tea/ },
        { role: /^assistant$/, text: 'Tea is ready.' },
      ],
      'prompt then answer',
    );
  },
);
