import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseKeyring } from '@agentyard/crypto';
import { sealAgentSecret } from '@agentyard/agent-gateway';
import {
  createUserRow,
  identityHeaders,
  malformedCursors,
  subscribeUser,
  systemDb,
  walkPages,
} from '@agentyard/testing';
import { loadAgentsConfig } from '../src/config.ts';
import { startWorkers } from '../src/app.ts';
import { build } from './helper.ts';

// Mission control's graph and traces, the colony, installations and swarms, through the agents
// service with its worker on real PostgreSQL and Redis. A swarm member's gateway is a local server
// speaking what an OpenClaw gateway speaks to the platform (its OpenAI-compatible chat and its hooks).
t.setTimeout(120_000);
const own = `${process.env.QUEUE_PREFIX ?? 'test'}-${randomBytes(4).toString('hex')}`;
const env = {
  QUEUE_PREFIX: own,
  RUNTIME_INSTANCE: own,
  RUNTIME_DRIVER: 'process',
  PUBLIC_BASE_URL: 'http://console.example.test',
};
const app = await build(t, env);
const config = loadAgentsConfig({ ...process.env, ...env });
const keyring = parseKeyring(config.ENCRYPTION_KEYS);
const db = systemDb();

async function user(plan?: string) {
  const row = await createUserRow();
  if (plan) await subscribeUser(row.id, plan);
  return {
    id: row.id,
    headers: identityHeaders({ userId: row.id, email: row.email }),
    keyHeaders: identityHeaders({ userId: row.id, email: row.email, auth: 'user-key' }),
  };
}
async function agentOf(userId: string, values: Record<string, unknown> = {}) {
  return await db
    .insertInto('agents')
    .values({
      user_id: userId,
      name: `a-${randomUUID().slice(0, 6)}`,
      model: 'm',
      tools_profile: 'messaging',
      subdomain: `f-${randomUUID().slice(0, 8)}`,
      ...values,
    })
    .returning(['id', 'name'])
    .executeTakeFirstOrThrow();
}
const get = (url: string, headers: Record<string, string>) => app.inject({ method: 'GET', url, headers });

t.test("graph: the owner's agents with status and health, bus traffic between them as edges", async (t) => {
  const alice = await user();
  const bob = await user();
  const a = await agentOf(alice.id, { status: 'running', started_at: new Date(Date.now() - 60_000) });
  const b = await agentOf(alice.id, { status: 'stopped', last_error: 'Exited unexpectedly: restarting' });
  const bobs = await agentOf(bob.id);
  await db
    .insertInto('agent_events')
    .values([
      { agent_id: a.id, user_id: alice.id, kind: 'health', detail: 'healthy' },
      { agent_id: a.id, user_id: alice.id, kind: 'restarted' },
      { agent_id: a.id, user_id: alice.id, kind: 'restarted', at: new Date(Date.now() - 3 * 86_400_000) },
    ])
    .execute();
  const bus = (from: string, to: string, delivered: boolean, error: string | null = null) => ({
    message_id: randomUUID(),
    user_id: alice.id,
    from_agent_id: from,
    to_agent_id: to,
    action: 'PING',
    payload: '{}',
    signed_at: new Date(),
    signature: '0x',
    delivered_at: delivered ? new Date() : null,
    delivery_error: error,
  });
  await db
    .insertInto('bus_messages')
    .values([bus(a.id, b.id, true), bus(a.id, b.id, false, 'refused'), bus(b.id, a.id, true), bus(a.id, bobs.id, true)])
    .execute();

  const res = await get('/api/mission-control/fleet/graph', alice.headers);
  t.equal(res.statusCode, 200);
  const graph = res.json();
  t.equal(graph.windowHours, 24);
  t.same(
    graph.nodes.map((n: { id: string }) => n.id),
    [a.id, b.id],
  );
  t.has(graph.nodes[0], { status: 'running', health: 'healthy', restarts: 1, lastError: null });
  t.match(graph.nodes[1], {
    status: /^stopped$/,
    health: null,
    restarts: 0,
    lastError: 'Exited unexpectedly: restarting',
  });
  const edges = Object.fromEntries(graph.edges.map((e: { from: string; to: string }) => [`${e.from}>${e.to}`, e]));
  t.same(
    Object.keys(edges).sort(),
    [`${a.id}>${b.id}`, `${b.id}>${a.id}`].sort(),
    "a message to another user's agent is no edge",
  );
  t.match(edges[`${a.id}>${b.id}`], { messages: 2, delivered: 1, failed: 1 });
  t.equal(
    (await get('/api/mission-control/fleet/graph?windowHours=100', alice.headers)).json().nodes[0].restarts,
    2,
    'a wider window counts the older restart',
  );
  const bobsGraph = (await get('/api/mission-control/fleet/graph', bob.headers)).json();
  t.same(
    bobsGraph.nodes.map((n: { id: string }) => n.id),
    [bobs.id],
  );
  t.same(bobsGraph.edges, []);
  t.equal((await get('/api/mission-control/fleet/graph?windowHours=0', alice.headers)).statusCode, 400);
});

t.test(
  'traces: model calls (on a channel or not), scheduled runs, heartbeats and bus deliveries, newest first, filtered and paged',
  async (t) => {
    const alice = await user();
    const bob = await user();
    const a = await agentOf(alice.id);
    const b = await agentOf(alice.id);
    const bobs = await agentOf(bob.id);
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    const usage = (userId: string, agentId: string, when: Date, cost: string) => ({
      id: randomUUID(),
      user_id: userId,
      user_ref: userId,
      agent_id: agentId,
      model: 'm',
      provider: 'p',
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      cost_usd: cost,
      turn_count: 1,
      occurred_at: when,
      day: when.toISOString().slice(0, 10),
    });
    await db
      .insertInto('usage_events')
      .values([
        usage(alice.id, a.id, at(1), '0.0100'),
        // A call every provider attempt failed: no tokens, no cost.
        {
          ...usage(alice.id, b.id, at(3), '0'),
          input_tokens: 0,
          output_tokens: 0,
          total_tokens: 0,
          outcome: 'failed' as const,
        },
        usage(bob.id, bobs.id, at(2), '9'),
        // A call of a turn a Telegram message started, as the AI gateway labelled it.
        { ...usage(alice.id, a.id, at(3.5), '0.0200'), channel: 'telegram' },
      ])
      .execute();
    const task = await db
      .insertInto('scheduled_tasks')
      .values({ user_id: alice.id, agent_id: b.id, name: 't', cron_schedule: '0 * * * *', prompt: 'p', enabled: false })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('scheduled_task_runs')
      .values({
        task_id: task.id,
        user_id: alice.id,
        due_at: at(5),
        status: 'failed',
        started_at: at(5),
        finished_at: at(4.9),
        error: 'x',
      })
      .execute();
    await db
      .insertInto('heartbeats')
      .values({ user_id: alice.id, agent_ref: a.id, agent_id: a.id, enabled: true, last_heartbeat: at(4) })
      .execute();
    await db
      .insertInto('bus_messages')
      .values({
        message_id: randomUUID(),
        user_id: alice.id,
        from_agent_id: a.id,
        to_agent_id: b.id,
        action: 'PING',
        payload: '{}',
        signed_at: at(2),
        signature: '0x',
        created_at: at(2),
        delivered_at: at(1.99),
      })
      .execute();

    const all = (await get('/api/mission-control/fleet/traces', alice.headers)).json();
    t.same(
      all.traces.map((r: { kind: string }) => r.kind),
      ['chat', 'bus', 'chat', 'channel', 'heartbeat', 'scheduled'],
    );
    t.has(all.traces[0], { agentId: a.id, status: 'completed', tokens: 15, costUsd: 0.01 });
    t.has(all.traces[1], { agentId: a.id, status: 'delivered', tokens: null, costUsd: null });
    t.has(all.traces[2], { agentId: b.id, kind: 'chat', status: 'failed', tokens: 0, costUsd: 0 });
    t.ok(all.traces[1].durationMs >= 0 && all.traces[1].durationMs < 2000);
    t.has(all.traces[3], { agentId: a.id, status: 'completed', tokens: 15, costUsd: 0.02, durationMs: null });
    t.has(all.traces[5], { agentId: b.id, status: 'failed', durationMs: 6000 });
    t.equal(all.nextCursor, null);
    t.same(
      (await get(`/api/mission-control/fleet/traces?agentId=${b.id}`, alice.headers))
        .json()
        .traces.map((r: { kind: string }) => r.kind),
      ['chat', 'scheduled'],
    );
    t.same((await get('/api/mission-control/fleet/traces?kind=bus', alice.headers)).json().traces.length, 1);
    const channel = (await get('/api/mission-control/fleet/traces?kind=channel', alice.headers)).json().traces;
    t.same(
      channel.map((r: { id: string }) => r.id),
      [all.traces[3].id],
      'kind=channel: the Telegram turn alone',
    );
    t.match(channel[0].id, /^channel:/);
    t.same(
      (await get('/api/mission-control/fleet/traces?kind=chat', alice.headers))
        .json()
        .traces.map((r: { id: string }) => r.id),
      [all.traces[0].id, all.traces[2].id],
      'kind=chat: the other model calls',
    );
    t.same(
      (await get(`/api/mission-control/fleet/traces?agentId=${bobs.id}`, alice.headers)).json().traces,
      [],
      "another user's agent shows nothing",
    );
    const pages = await walkPages(async (cursor) => {
      const page = (
        await get(`/api/mission-control/fleet/traces?limit=2${cursor ? `&cursor=${cursor}` : ''}`, alice.headers)
      ).json();
      return { items: page.traces.map((r: { id: string }) => r.id), nextCursor: page.nextCursor };
    });
    t.same(
      pages.flat(),
      all.traces.map((r: { id: string }) => r.id),
      'pages of 2 hold the same runs in the same order',
    );
    for (const cursor of malformedCursors('text'))
      t.equal(
        (await get(`/api/mission-control/fleet/traces?cursor=${encodeURIComponent(cursor)}`, alice.headers)).statusCode,
        400,
        cursor,
      );
    t.equal((await get('/api/mission-control/fleet/traces?kind=nope', alice.headers)).statusCode, 400);
  },
);

t.test('colony: lineage of clones, diagnostics of each agent, soul is 501', async (t) => {
  const alice = await user();
  const origin = await agentOf(alice.id, { status: 'running' });
  const snapshot = randomUUID();
  const clone = await agentOf(alice.id, { cloned_from_agent_id: origin.id, cloned_from_snapshot_id: snapshot });
  const orphan = await agentOf(alice.id, { cloned_from_agent_id: randomUUID(), cloned_from_snapshot_id: randomUUID() });
  const tree = (await get('/api/colony/status?action=tree', alice.headers)).json();
  t.same(tree.roots, [origin.id, orphan.id], 'a clone whose source is gone starts a tree of its own');
  const byId = Object.fromEntries(tree.agents.map((a: { id: string }) => [a.id, a]));
  t.match(byId[clone.id], { parentId: origin.id, parentName: origin.name, snapshotId: snapshot, children: [] });
  t.same(byId[origin.id].children, [clone.id]);
  t.match(byId[orphan.id], { parentName: null });

  await db
    .insertInto('agent_events')
    .values([
      {
        agent_id: origin.id,
        user_id: alice.id,
        kind: 'exit',
        exit_code: 137,
        oom_killed: true,
        at: new Date(Date.now() - 5000),
      },
      { agent_id: origin.id, user_id: alice.id, kind: 'restarted' },
    ])
    .execute();
  await db
    .insertInto('agent_metric_samples')
    .values({
      agent_id: origin.id,
      user_id: alice.id,
      sampled_at: new Date(),
      running: true,
      cpu_percent: 1,
      memory_bytes: 123456789,
    })
    .execute();
  const diagnostics = (await get('/api/colony/status?action=diagnostics', alice.headers)).json();
  const origins = diagnostics.agents.find((a: { id: string }) => a.id === origin.id);
  t.has(origins, {
    status: 'running',
    restarts: 1,
    lastExit: { kind: 'exit', exitCode: 137, oomKilled: true },
    memoryBytes: 123456789,
  });
  t.match(
    diagnostics.agents.find((a: { id: string }) => a.id === clone.id),
    { restarts: 0, lastExit: null, memoryBytes: null },
  );

  const soul = await get('/api/colony/status?action=soul', alice.headers);
  t.equal(soul.statusCode, 501);
  t.match(soul.json(), { code: /^NOT_SUPPORTED$/, error: /external service/ });
  t.same(
    (await get('/api/colony/status?action=tree', (await user()).headers)).json().agents,
    [],
    'another user sees none of them',
  );
});

t.test('installations: registered with the key, token sealed, heartbeats, owner-only', async (t) => {
  const alice = await user();
  const bob = await user();
  const token = `gw-${randomUUID()}`;
  const res = await app.inject({
    method: 'POST',
    url: '/api/register-link',
    headers: alice.keyHeaders,
    payload: { mode: 'remote', gatewayUrl: 'https://claw.example.test', gatewayToken: token, name: 'laptop' },
  });
  t.equal(res.statusCode, 201);
  const { installationId, dashboardUrl } = res.json();
  t.equal(dashboardUrl, 'http://console.example.test/installations');
  const row = await db
    .selectFrom('installations')
    .selectAll()
    .where('id', '=', installationId)
    .executeTakeFirstOrThrow();
  t.equal(row.user_id, alice.id, "the key's user");
  t.notOk(JSON.stringify(row).includes(token), 'the token is not at rest in the clear');
  t.equal(keyring.decrypt(row.gateway_token_sealed!, `installation:${installationId}:gateway-token`), token);
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/register-home',
        headers: alice.keyHeaders,
        payload: { mode: 'remote' },
      })
    ).statusCode,
    400,
    'remote without gatewayUrl',
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/register-home',
        headers: alice.keyHeaders,
        payload: { mode: 'local', userId: bob.id },
      })
    ).statusCode,
    400,
    'no user in the body',
  );

  await db
    .updateTable('installations')
    .set({ last_seen_at: new Date(Date.now() - 3600_000) })
    .where('id', '=', installationId)
    .execute();
  t.has((await get('/api/installations', alice.headers)).json().installations, [
    { id: installationId, kind: 'link', mode: 'remote', status: 'offline', hasGatewayToken: true, name: 'laptop' },
  ]);
  t.notOk((await get('/api/installations', alice.headers)).body.includes(token));
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: `/api/installations/${installationId}/heartbeat`,
        headers: bob.keyHeaders,
        payload: {},
      })
    ).statusCode,
    404,
    "bob's key cannot touch it",
  );
  const beat = await app.inject({
    method: 'POST',
    url: `/api/installations/${installationId}/heartbeat`,
    headers: alice.keyHeaders,
    payload: { version: '2026.9.6' },
  });
  t.equal(beat.statusCode, 200);
  t.has(beat.json().installation, { status: 'online', version: '2026.9.6' });
  t.same((await get('/api/installations', bob.headers)).json().installations, []);
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/installations/${installationId}`, headers: bob.headers }))
      .statusCode,
    404,
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/installations/${installationId}`, headers: alice.headers }))
      .statusCode,
    200,
  );
  t.same((await get('/api/installations', alice.headers)).json().installations, []);

  const script = await app.inject({ method: 'GET', url: '/install', headers: identityHeaders() });
  t.equal(script.statusCode, 200);
  t.match(script.headers['content-type'], /text\/x-shellscript/);
  t.match(script.body, /^#!\/bin\/sh\n/);
  t.match(script.body, /BASE_URL="\$\{AGENTYARD_URL:-'http:\/\/console.example.test'\}"/);
  t.match(
    (await app.inject({ method: 'GET', url: '/link', headers: identityHeaders() })).body,
    /REGISTER_PATH=\/api\/register-link/,
  );
});

/** A member's gateway: chat turns answered with its name (recording the bearer and session), hooks accepted. */
async function memberGateway(t: Test, name: string, options: { hold?: Promise<void> } = {}) {
  const seen: { path: string; authorization: string | undefined; session: string | undefined; body: string }[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({
      path: req.url ?? '',
      authorization: req.headers.authorization,
      session: req.headers['x-openclaw-session-key'] as string | undefined,
      body,
    });
    if (req.url === '/hooks/agent')
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, runId: `run-${name}` }));
    await options.hold;
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `c-${name}`,
        choices: [{ index: 0, message: { role: 'assistant', content: `${name} says hi` } }],
        usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}
async function runningMember(t: Test, userId: string, name: string, options: { hold?: Promise<void> } = {}) {
  const gateway = await memberGateway(t, name, options);
  const agent = await agentOf(userId, { status: 'running', gateway_url: gateway.url });
  const gatewayToken = `gt-${name}-${randomUUID()}`;
  await db
    .updateTable('agents')
    .set({
      gateway_token_sealed: sealAgentSecret(keyring, agent.id, 'gateway-token', gatewayToken),
      hooks_token_sealed: sealAgentSecret(keyring, agent.id, 'hooks-token', `hk-${name}`),
    })
    .where('id', '=', agent.id)
    .execute();
  return { ...agent, gateway, gatewayToken };
}

t.test('swarms: members validated and limited by plan, runs collect each answer through the worker', async (t) => {
  const workers = await startWorkers(config);
  t.teardown(() => workers.close());
  const alice = await user('solo');
  const bob = await user('solo');
  const one = await runningMember(t, alice.id, 'one');
  const two = await runningMember(t, alice.id, 'two');
  const stopped = await agentOf(alice.id, { status: 'stopped' });
  const bobs = await agentOf(bob.id);
  const post = (url: string, headers: Record<string, string>, payload: object) =>
    app.inject({ method: 'POST', url, headers, payload });

  const foreign = await post('/api/swarms', alice.headers, { name: 'crew', agentIds: [one.id, bobs.id] });
  t.equal(foreign.statusCode, 404, "another user's agent is not found");
  t.equal(
    await db
      .selectFrom('swarms')
      .select('id')
      .where('user_id', '=', alice.id)
      .execute()
      .then((r) => r.length),
    0,
    'nothing written',
  );
  const tooMany = await post('/api/swarms', alice.headers, { name: 'crew', agentIds: [one.id, two.id, stopped.id] });
  t.equal(tooMany.statusCode, 429);
  t.has(tooMany.json(), { code: 'SWARM_MEMBER_LIMIT' });
  const created = await post('/api/swarms', alice.headers, { name: 'crew', agentIds: [one.id, two.id] });
  t.equal(created.statusCode, 201);
  const swarm = created.json().swarm;
  t.same(swarm.agentIds, [one.id, two.id]);
  t.has(
    (await post('/api/swarms', alice.headers, { name: 'second', agentIds: [one.id] })).json(),
    { code: 'SWARM_LIMIT' },
    'solo keeps one swarm',
  );
  t.equal((await get(`/api/swarms/${swarm.id}`, bob.headers)).statusCode, 404);
  t.equal(
    (
      await app.inject({
        method: 'PATCH',
        url: `/api/swarms/${swarm.id}`,
        headers: bob.headers,
        payload: { name: 'x' },
      })
    ).statusCode,
    404,
  );
  t.equal((await post(`/api/swarms/${swarm.id}/runs`, bob.headers, { message: 'hi', mode: 'all' })).statusCode, 404);

  const waitForRun = async (runId: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const run = (await get(`/api/swarms/${swarm.id}/runs/${runId}`, alice.headers)).json().run;
      if (run.status === 'completed' || run.status === 'failed') return run;
      if (Date.now() > deadline) throw new Error(`run still ${run.status}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  const started = await post(`/api/swarms/${swarm.id}/runs`, alice.headers, { message: 'report in', mode: 'all' });
  t.equal(started.statusCode, 202);
  t.has(started.json().run, {
    status: 'pending',
    mode: 'all',
    members: [
      { agentId: one.id, status: 'pending' },
      { agentId: two.id, status: 'pending' },
    ],
  });
  const run = await waitForRun(started.json().run.id);
  t.equal(run.status, 'completed');
  t.match(run.members, [
    { agentId: one.id, status: /^answered$/, answer: 'one says hi', tokens: 7, costUsd: 0 },
    { agentId: two.id, status: /^answered$/, answer: 'two says hi', tokens: 7, costUsd: 0 },
  ]);
  const turn = one.gateway.seen.find((s) => s.path === '/v1/chat/completions')!;
  t.equal(turn.authorization, `Bearer ${one.gatewayToken}`, "each member's own gateway token");
  t.equal(turn.session, `agentyard:swarm:${swarm.id}`);
  t.match(JSON.parse(turn.body).messages, [{ role: /^user$/, content: 'report in' }]);

  const broadcast = await waitForRun(
    (await post(`/api/swarms/${swarm.id}/runs`, alice.headers, { message: 'heads up', mode: 'broadcast' })).json().run
      .id,
  );
  t.has(broadcast.members, [
    { status: 'delivered', answer: null },
    { status: 'delivered', answer: null },
  ]);
  const hook = two.gateway.seen.find((s) => s.path === '/hooks/agent')!;
  t.equal(hook.authorization, 'Bearer hk-two', 'broadcast goes through the hooks, as a scheduled prompt');
  t.match(JSON.parse(hook.body), { message: 'heads up', sessionKey: `swarm:${swarm.id}` });

  // Replace a member with a stopped agent: it is skipped with the reason, the run still completes.
  t.equal(
    (
      await app.inject({
        method: 'PATCH',
        url: `/api/swarms/${swarm.id}`,
        headers: alice.headers,
        payload: { agentIds: [one.id, stopped.id] },
      })
    ).statusCode,
    200,
  );
  const partial = await waitForRun(
    (await post(`/api/swarms/${swarm.id}/runs`, alice.headers, { message: 'again', mode: 'first' })).json().run.id,
  );
  t.match(partial.members, [
    { agentId: one.id, status: /^answered$/ },
    { agentId: stopped.id, status: /^skipped$/, error: 'The agent was stopped' },
  ]);

  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/swarms/${swarm.id}`, headers: bob.headers })).statusCode,
    404,
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/swarms/${swarm.id}`, headers: alice.headers })).statusCode,
    200,
  );
  t.same((await get('/api/swarms', alice.headers)).json().swarms, []);
  t.equal(
    await db
      .selectFrom('swarm_runs')
      .select('id')
      .where('swarm_id', '=', swarm.id)
      .execute()
      .then((r) => r.length),
    0,
    'its runs went with it',
  );
});

t.test('swarms: `first` settles at the first answer and cancels the others', async (t) => {
  const workers = await startWorkers(config);
  t.teardown(() => workers.close());
  const alice = await user('collective');
  let release!: () => void;
  const hold = new Promise<void>((resolve) => (release = resolve));
  const quick = await runningMember(t, alice.id, 'quick');
  const slow = await runningMember(t, alice.id, 'slow', { hold });
  t.teardown(() => release());
  const swarm = (
    await app.inject({
      method: 'POST',
      url: '/api/swarms',
      headers: alice.headers,
      payload: { name: 'race', agentIds: [slow.id, quick.id] },
    })
  ).json().swarm;
  const runId = (
    await app.inject({
      method: 'POST',
      url: `/api/swarms/${swarm.id}/runs`,
      headers: alice.headers,
      payload: { message: 'go', mode: 'first' },
    })
  ).json().run.id;
  const deadline = Date.now() + 30_000;
  let run: { status: string; members: unknown[] };
  do {
    run = (await get(`/api/swarms/${swarm.id}/runs/${runId}`, alice.headers)).json().run;
    if (Date.now() > deadline) throw new Error('run did not settle');
    await new Promise((resolve) => setImmediate(resolve));
  } while (run.status !== 'completed');
  t.match(run.members, [
    { agentId: slow.id, status: /^skipped$/, error: 'Cancelled: another member answered first' },
    { agentId: quick.id, status: /^answered$/, answer: 'quick says hi' },
  ]);
});
