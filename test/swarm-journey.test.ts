import t from 'tap';
import { DEFAULT_AGENT_IMAGE } from '@agentyard/runtime';
import { startLocalProviders, startMailServer, startWholePlatform, uniqueEmail } from '@agentyard/testing';
import { noAgentContainers, runContainers } from './support/containers.ts';
import { observe, payAtLocalCheckout, registerAndVerify, WebClient } from './support/journey.ts';

// Issue 32's swarm as an owner meets it, through the real edge on the platform as `npm start` runs
// it, with the real OpenClaw image: two agents in a swarm, one message, both answers collected into
// the run (each agent's turn runs its model call through the AI gateway to the local model server),
// with tokens and cost. Heavy: two OpenClaw agents.
t.setTimeout(1_800_000);

t.test('a swarm run collects the answers of two real agents', { skip: noAgentContainers }, async (t) => {
  const { own, removeOurs } = runContainers();
  const model = await startLocalProviders(t);
  const mailbox = await startMailServer(t);
  const platform = await startWholePlatform(
    {
      RUNTIME_INSTANCE: own,
      AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
      AGENT_PORT_RANGE: '36500-36999',
      AGENT_READY_TIMEOUT_MS: '420000',
      OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
      OPENAI_API_KEY: model.env.OPENAI_API_KEY,
      SMTP_URL: mailbox.url,
      BILLING_PROVIDER: 'local',
      USAGE_FLUSH_MS: '200',
    },
    { listenTimeoutMs: 180_000 },
  );
  let owner = '';
  const agents: string[] = [];
  t.teardown(async () => {
    for (const id of agents)
      await fetch(`${platform.backendUrl}/api/agents/${id}`, {
        method: 'DELETE',
        signal: AbortSignal.timeout(240_000),
        headers: { authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`, 'x-user-id': owner },
      }).catch(() => undefined);
    await platform.stop();
    await removeOurs();
  });

  const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
  owner = (await registerAndVerify(web, mailbox, uniqueEmail('swarm'), 'a swarm journey password')).userId;
  t.equal(await payAtLocalCheckout(web, 'collective'), 303, 'subscribed to collective');
  const status = async (id: string) => {
    const res = await web.request('GET', `/api/agents/${id}`);
    return res.status === 200
      ? ((await res.json()) as { agent: { status: string } }).agent.status
      : `HTTP ${res.status}`;
  };
  for (const name of ['Scout', 'Writer']) {
    const provisioned = await web.request('POST', '/api/agents/provision', { name });
    t.equal(provisioned.status, 201, `${name} provisioned`);
    agents.push(((await provisioned.json()) as { agent: { id: string } }).agent.id);
  }
  for (const id of agents) {
    const settled = await observe(
      () => status(id),
      (s) => s !== 'provisioning' && s !== 'pending' && s !== 'deploying',
      { everyMs: 1000, deadlineMs: 600_000, what: 'the agent running' },
    );
    if (!t.equal(settled, 'running')) return;
  }

  const created = await web.request('POST', '/api/swarms', { name: 'crew', agentIds: agents });
  t.equal(created.status, 201);
  const swarmId = ((await created.json()) as { swarm: { id: string } }).swarm.id;
  const started = await web.request('POST', `/api/swarms/${swarmId}/runs`, {
    message: 'Report in, please.',
    mode: 'all',
  });
  t.equal(started.status, 202);
  const runId = ((await started.json()) as { run: { id: string } }).run.id;
  type Member = {
    agentId: string;
    status: string;
    answer: string | null;
    error: string | null;
    tokens: number | null;
    costUsd: number | null;
  };
  type Run = { status: string; members: Member[] };
  // Read every 3 s: the swarms' rate limit (60 a minute per user) holds for this reader too.
  const runOf = async (): Promise<Run> => {
    const res = await web.request('GET', `/api/swarms/${swarmId}/runs/${runId}`);
    return res.status === 200
      ? ((await res.json()) as { run: Run }).run
      : { status: `HTTP ${res.status}`, members: [] };
  };
  const run = await observe(runOf, (r) => r.status === 'completed' || r.status === 'failed', {
    everyMs: 3000,
    deadlineMs: 600_000,
    what: 'the swarm run settled',
  });
  t.equal(run.status, 'completed', JSON.stringify(run));
  t.same(
    run.members.map((m) => m.agentId),
    agents,
  );
  for (const member of run.members) {
    t.equal(member.status, 'answered', `${member.agentId}: ${member.error ?? ''}`);
    t.equal(member.answer, 'Hello from the local provider', 'the answer the model server gave the agent');
  }
  t.ok(
    model.delivered.some((d) => JSON.stringify(d.body ?? '').includes('Report in, please.')),
    'the message reached the model through the AI gateway',
  );
  // Usage rows are written in batches: the cost shows once each member's model call is in them.
  const costed = await observe(runOf, (r) => r.members.length === 2 && r.members.every((m) => (m.costUsd ?? 0) > 0), {
    everyMs: 3000,
    deadlineMs: 90_000,
    what: 'both members costed',
  });
  for (const member of costed.members) t.ok(member.costUsd! > 0, `${member.agentId} cost $${member.costUsd}`);

  const strangers = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);
  await registerAndVerify(strangers, mailbox, uniqueEmail('swarm-stranger'), 'another swarm password');
  t.equal(
    (await strangers.request('GET', `/api/swarms/${swarmId}/runs/${runId}`)).status,
    404,
    'another user cannot read the run',
  );
});
