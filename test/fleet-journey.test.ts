import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { hashToken, randomToken } from '@agentyard/crypto';
import { startLocalProviders, startPlatform, subscribeUser, systemDb, uniqueEmail } from '@agentyard/testing';
import { busTypedData } from '../services/bridge/src/domain/bus-signatures.ts';

// Issue 32 through the real edge, as a user meets it: mission control shows their two agents, the
// bus message one sent the other and what each cost; the install script, run with bash, links this
// machine and the installation shows as seen. Agents' model calls reach the AI gateway on the edge's
// agent listener, answered by local provider servers.
t.setTimeout(240_000);
const run = promisify(execFile);
const CHAIN_ID = 31337;
const providers = await startLocalProviders(t);
const platform = await startPlatform(['auth', 'agents', 'ai', 'bridge'], {
  ...providers.env,
  USAGE_FLUSH_MS: '50',
  UNDERGROUND_RPC_URL: 'http://127.0.0.1:9',
  UNDERGROUND_CHAIN_ID: String(CHAIN_ID),
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-e2e-fleet`,
  RATE_LIMITS: 'web-register=1000',
});
t.teardown(() => platform.stop());

type Graph = { nodes: { name: string }[]; edges: unknown[] };
type Costs = {
  plan: string;
  planFeeUsd: number;
  agents: { name: string; calls: number; aiCostUsd: number; planShareUsd: number }[];
  budget: { leftUsd: number; includedUsd: number };
};
type Traces = { traces: { kind: string; agentId: string; status: string }[] };
type Installations = { installations: { id: string; lastSeenAt: string }[] };

async function signUp() {
  const email = uniqueEmail('fleet');
  const web = (path: string, body: object) =>
    fetch(`${platform.webUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  t.equal((await web('/api/register', { email, password: 'fleet password 1' })).status, 201);
  const login = await web('/api/auth/login', { email, password: 'fleet password 1' });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('agentyard-session='))!
    .split(';')[0]!;
  const { id } = await systemDb().selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  const call = (path: string, init: { method?: string; body?: object; bearer?: string } = {}) =>
    fetch(`${platform.webUrl}${path}`, {
      method: init.method ?? (init.body ? 'POST' : 'GET'),
      headers: {
        ...(init.body ? { 'content-type': 'application/json' } : {}),
        ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : { cookie }),
      },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
  return { id, email, call };
}

async function agentWithKey(userId: string, name: string) {
  const key = `ag_${randomToken()}`;
  const agent = await systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name,
      status: 'running',
      model: 'anthropic/claude-haiku-4-5',
      ai_provider: 'anthropic',
      tools_profile: 'messaging',
      subdomain: `fl-${crypto.randomUUID().slice(0, 8)}`,
      ai_key_hash: hashToken(key),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: agent.id, key };
}

t.test(
  'mission control: two agents, the bus message between them, their costs',
  { skip: !platform.agentUrl && 'no agent listener (EDGE_AGENT_HOST unset)' },
  async (t) => {
    const alice = await signUp();
    await subscribeUser(alice.id, 'collective');
    const scout = await agentWithKey(alice.id, 'scout');
    const writer = await agentWithKey(alice.id, 'writer');

    // Each agent thinks once, through the AI gateway with its own key.
    for (const agent of [scout, writer]) {
      const res = await fetch(`${platform.agentUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.key}` },
        body: JSON.stringify({
          model: 'anthropic/claude-haiku-4-5',
          max_tokens: 50,
          messages: [{ role: 'user', content: 'status?' }],
        }),
      });
      t.equal(res.status, 200, await res.clone().text());
    }

    // The scout tells the writer something over the signed agent bus.
    const backend = (path: string, init: { method: string; body: object; key?: boolean }) =>
      fetch(`${platform.backendUrl}${path}`, {
        method: init.method,
        headers: {
          'content-type': 'application/json',
          ...(init.key === false
            ? {}
            : {
                authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`,
                'x-user-id': alice.id,
                'x-user-email': alice.email,
              }),
        },
        body: JSON.stringify(init.body),
      });
    const signer = privateKeyToAccount(generatePrivateKey());
    for (const agent of [scout, writer])
      t.equal(
        (
          await backend(`/api/underground/agents/${agent.id}/bus`, {
            method: 'PUT',
            body: { walletAddress: signer.address, webhookUrl: 'https://hooks.example.test/agent' },
          })
        ).status,
        200,
      );
    const message = {
      messageId: crypto.randomUUID(),
      action: 'DRAFT_READY',
      fromAgentId: scout.id,
      toAgentId: writer.id,
      payload: { topic: 'fleet' },
      timestamp: Math.floor(Date.now() / 1000),
    };
    const sent = await backend('/api/underground/bus/send', {
      method: 'POST',
      body: { ...message, signature: await signer.signTypedData(busTypedData(message, CHAIN_ID)) },
      key: false,
    });
    t.equal(sent.status, 200);

    const graph = (await (await alice.call('/api/mission-control/fleet/graph')).json()) as Graph;
    t.same(graph.nodes.map((n: { name: string }) => n.name).sort(), ['scout', 'writer']);
    t.match(graph.edges, [{ from: scout.id, to: writer.id, messages: 1 }]);

    // Usage rows land on the AI service's next flush (50 ms): the costs are read until both agents show theirs.
    const deadline = Date.now() + 30_000;
    let costs: Costs;
    for (;;) {
      costs = (await (await alice.call('/api/mission-control/fleet/costs')).json()) as Costs;
      if (costs.agents.every((a: { calls: number }) => a.calls >= 1) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.equal(costs.plan, 'collective');
    t.equal(costs.agents.length, 2);
    for (const agent of costs.agents) {
      t.equal(agent.calls, 1, `${agent.name} made one call`);
      t.ok(agent.aiCostUsd > 0, `${agent.name} cost $${agent.aiCostUsd}`);
      t.equal(agent.planShareUsd, costs.planFeeUsd / 2, 'half the plan fee each');
    }
    t.ok(costs.budget.leftUsd < costs.budget.includedUsd, 'the spend came off the budget');

    const traces = (await (await alice.call('/api/mission-control/fleet/traces')).json()) as Traces;
    t.same([...new Set(traces.traces.map((r: { kind: string }) => r.kind))].sort(), ['bus', 'chat']);
    t.has(
      traces.traces.find((r: { kind: string }) => r.kind === 'bus'),
      { agentId: scout.id, status: 'pending' },
    );
    t.equal(
      ((await (await alice.call(`/api/mission-control/fleet/traces?agentId=${writer.id}&kind=chat`)).json()) as Traces)
        .traces.length,
      1,
    );

    const mallory = await signUp();
    t.same(
      ((await (await mallory.call('/api/mission-control/fleet/graph')).json()) as Graph).nodes,
      [],
      'another user sees none of it',
    );
    t.equal(((await (await mallory.call('/api/mission-control/fleet/costs')).json()) as Costs).agents.length, 0);
  },
);

t.test('the install script links this machine; the installation shows as seen', async (t) => {
  const bob = await signUp();
  const created = await bob.call('/api/keys', { body: { name: 'laptop' } });
  t.equal(created.status, 201);
  const { key } = (await created.json()) as { key: string };
  const script = await fetch(`${platform.webUrl}/install`);
  t.equal(script.status, 200);
  const home = await mkdtemp(join(tmpdir(), 'agentyard-install-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    AGENTYARD_HOME: join(home, '.agentyard'),
    AGENTYARD_URL: platform.webUrl,
    AGENTYARD_API_KEY: key,
  };
  const file = join(home, 'install.sh');
  await writeFile(file, await script.text());
  const { stdout } = await run('bash', [file], { env, timeout: 60_000 });
  t.match(stdout, /Linked: installation [0-9a-f-]{36}/);
  const id = (await readFile(join(home, '.agentyard', 'installation'), 'utf8')).trim();
  t.equal((await stat(join(home, '.agentyard', 'key'))).mode & 0o777, 0o600, "the key file is the user's only");

  const listed = (await (await bob.call('/api/installations')).json()) as Installations;
  t.match(listed.installations, [{ id, kind: /^home$/, mode: /^local$/, status: /^online$/, lastSeenAt: String }]);
  const seenAt = listed.installations[0]!.lastSeenAt;
  await run(join(home, '.agentyard', 'heartbeat.sh'), [], { env: { PATH: process.env.PATH }, timeout: 30_000 });
  const again = ((await (await bob.call('/api/installations')).json()) as Installations).installations[0]!;
  t.ok(again.lastSeenAt > seenAt, 'the heartbeat moved last seen on');

  const noKey = await run('bash', [file], { env: { ...env, AGENTYARD_API_KEY: '' }, timeout: 30_000 }).catch(
    (error: { code: number; stderr: string }) => error,
  );
  t.equal((noKey as { code: number }).code, 2, 'without a key the script stops');
  const wrongKey = await run('bash', [file], {
    env: { ...env, AGENTYARD_API_KEY: `sk_${'x'.repeat(40)}` },
    timeout: 30_000,
  }).catch((error: { code: number }) => error);
  t.equal((wrongKey as { code: number }).code, 1, 'a key the platform does not know is refused');

  const mallory = await signUp();
  t.same(((await (await mallory.call('/api/installations')).json()) as Installations).installations, []);
  t.equal((await mallory.call(`/api/installations/${id}`, { method: 'DELETE' })).status, 404);
  t.equal((await bob.call(`/api/installations/${id}`, { method: 'DELETE' })).status, 200);
  t.same(((await (await bob.call('/api/installations')).json()) as Installations).installations, []);
});
