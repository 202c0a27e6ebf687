import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { WAKE_AGENT_JOB, wakeJobId, QUEUES } from '@agentyard/queue';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { openAgentSecret } from '@agentyard/agent-gateway';
import { parseKeyring } from '@agentyard/crypto';
import { backend, startAgents, web } from '../agents-harness.ts';

// This file's sweep pauses whatever idles for 300 ms in the agents table it reads: a database of its
// own, or it would pause the agents of test files running beside it.
await useOwnDatabase(t);

// Hibernation with the minimal gateway on the container engine (its cgroup freezer; without an
// engine, the process driver, whose pause is a SIGSTOP of the agent's process group): the worker's
// sweep pauses an idle agent and later stops it, and whatever reaches it wakes it first: the runtime
// proxy, the wake job the scheduler queues, and the sweep itself ahead of a scheduled prompt. 100
// pause cycles, each followed by a request through the platform and a turn on the agent's hooks.
// The real OpenClaw image and chat through the edge: test/agent-hibernation-journey.test.ts.
const engine = process.env.RUNTIME_DRIVER === 'docker';
t.test('idle agents are paused, then stopped, and woken by whatever reaches them', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-hibernation-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  t.setTimeout(600_000);
  const h = await startAgents(t, {
    ...(engine
      ? { AGENT_IMAGE: 'localhost/agentyard-gateway-minimal:1' }
      : {
          RUNTIME_DRIVER: 'process',
          RUNTIME_DATA_DIR: dataDir,
          AGENT_IMAGE: join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs'),
        }),
    AGENT_PORT_RANGE: '33000-33999',
    AGENT_READY_TIMEOUT_MS: '30000',
    HIBERNATE_PAUSE_AFTER: '300ms',
    HIBERNATE_STOP_AFTER: '3s',
    HIBERNATE_SWEEP_EVERY_MS: '200',
    HIBERNATE_ACTIVITY_EVERY_MS: '100',
    HIBERNATE_BOOT_ESTIMATE_MS: '2000',
  });
  const user = await h.subscribedUser('label');
  const stranger = await h.subscribedUser('label');
  const provisioned = await h.app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(user),
    payload: { name: 'Dormouse' },
  });
  t.equal(provisioned.statusCode, 201, provisioned.body);
  const id = provisioned.json().agent.id as string;
  t.match(await h.provisioned(id), /^running/);

  /** The agent's row once `done` holds (polled: the sweep's effect has no event of its own). */
  const until = async (
    done: (row: NonNullable<Awaited<ReturnType<typeof h.agentRow>>>) => boolean,
    what: string,
    deadlineMs = 30_000,
  ) => {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const row = (await h.agentRow(id))!;
      if (done(row)) return row;
      if (Date.now() > deadline)
        throw new Error(`${what}: not within ${deadlineMs} ms (${row.status}/${row.hibernation})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const asleep = (depth: 'paused' | 'stopped') =>
    until((r) => r.status === 'suspended' && r.hibernation === depth, `the agent ${depth}`);
  const proxied = (who = user) =>
    h.app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/healthz`, headers: backend(who) });
  const answersDirectly = async (gatewayUrl: string) =>
    fetch(`${gatewayUrl}/healthz`, { signal: AbortSignal.timeout(500) }).then(
      (r) => r.ok,
      () => false,
    );

  const paused = await asleep('paused');
  t.equal(
    (await h.driver.inspect(paused.container_id!))?.state,
    'paused',
    `the ${engine ? 'engine' : 'process driver'} holds it paused`,
  );
  t.notOk(await answersDirectly(paused.gateway_url!), 'a paused gateway does not answer by itself');
  const listed = await h.app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(user) });
  t.has(listed.json().agent, { status: 'suspended', hibernation: 'paused' }, 'its answer says how it sleeps');
  t.equal((await proxied(stranger)).statusCode, 404, "another user's request wakes nothing");
  t.equal((await h.agentRow(id))!.status, 'suspended', '… and the agent sleeps on');

  const woken = await proxied();
  t.equal(woken.statusCode, 200, 'a request through the runtime proxy is answered');
  t.has(woken.json(), { ok: true, status: 'live' }, "by the agent's gateway, woken first");
  t.has(await h.agentRow(id), { status: 'running', hibernation: null, suspended_at: null });

  // A turn as the scheduler sends one: the agent's hooks with its hooks token.
  const hooksToken = openAgentSecret(
    parseKeyring(h.config.ENCRYPTION_KEYS),
    id,
    'hooks-token',
    paused.hooks_token_sealed!,
  );
  const turn = async (n: number) => {
    const res = await fetch(`${paused.gateway_url}/hooks/agent`, {
      method: 'POST',
      signal: AbortSignal.timeout(10_000),
      headers: { authorization: `Bearer ${hooksToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: `cycle ${n}`, name: 'cycle', sessionKey: `hook:cycle-${n}`, timeoutSeconds: 10 }),
    });
    return res.status === 200 && typeof ((await res.json()) as { runId?: unknown }).runId === 'string';
  };
  const failed: number[] = [];
  for (let cycle = 1; cycle <= 100; cycle++) {
    await asleep('paused');
    if ((await proxied()).statusCode !== 200 || !(await turn(cycle))) failed.push(cycle);
  }
  t.same(failed, [], '100 pause → request → turn cycles, none failed');

  await asleep('paused');
  const together = await Promise.all([proxied(), proxied(), proxied()]);
  t.same(
    together.map((r) => r.statusCode),
    [200, 200, 200],
    'concurrent requests to a paused agent are all answered',
  );

  const stopped = await asleep('stopped');
  // The row says so before the gateway has exited: whoever reads it from then on wakes the agent.
  const deadline = Date.now() + 30_000;
  while ((await h.driver.inspect(stopped.container_id!))?.state !== 'stopped' && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 25));
  t.equal((await h.driver.inspect(stopped.container_id!))?.state, 'stopped', 'idle longer: stopped');
  t.equal((await proxied()).statusCode, 200, 'a request to a stopped agent boots it and is answered');

  // The scheduler's way: a wake job on the lifecycle queue, done by the worker, named for the hibernation.
  const again = await asleep('stopped');
  const jobId = wakeJobId(id, new Date(again.suspended_at!).getTime());
  await h.queues.get(QUEUES.lifecycle).add(WAKE_AGENT_JOB, { agentId: id }, { jobId });
  t.equal(await h.lifecycleJob(jobId), 'running', "the scheduler's wake job boots it");
  t.ok(await answersDirectly(again.gateway_url!), 'its gateway answers once the job is done');

  // A prompt due soon: the sweep starts a stopped agent ahead of it (its wake lead: boot × 1.5 + sweep + 5 s).
  await asleep('stopped');
  await systemDb()
    .insertInto('scheduled_tasks')
    .values({
      user_id: user.id,
      agent_id: id,
      name: 'soon',
      cron_schedule: '0 9 * * *',
      prompt: 'good morning',
      next_run: new Date(Date.now() + 4000),
    })
    .execute();
  const ahead = await until((r) => r.hibernation !== 'stopped', 'the agent started ahead of its prompt');
  t.not(
    ahead.hibernation,
    'stopped',
    'started ahead of its due prompt (running, or paused again: memory kept, resumed in an instant)',
  );

  // A stopped agent takes memory again only as far as its owner's plan (and the platform's capacity) allow.
  await systemDb().deleteFrom('scheduled_tasks').where('agent_id', '=', id).execute();
  await asleep('stopped');
  await systemDb().updateTable('subscriptions').set({ status: 'canceled' }).where('user_id', '=', user.id).execute();
  const refused = await proxied();
  t.equal(refused.statusCode, 403, 'no plan: the wake is refused');
  t.has(refused.json(), { code: 'SUBSCRIPTION_REQUIRED' });
  t.has(await h.agentRow(id), { status: 'suspended', hibernation: 'stopped' }, 'and the agent sleeps on');
});
