import t from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { QUEUES } from '@agentyard/queue';
import { createUserRow, startRelay, systemDb } from '@agentyard/testing';
import { configApplyJobId, enqueueConfigApply } from '../../src/domain/runtime/config-apply.ts';
import { PROVISION_JOB, provisionJobId } from '../../src/domain/runtime/provisioning.ts';
import { startWorkers } from '../../src/app.ts';
import { backend, startAgents, web } from '../agents-harness.ts';
import { build } from '../helper.ts';

// Each save is checked by the installed OpenClaw (`openclaw config validate`, seconds on a busy machine).
t.setTimeout(600_000);

// One agent's configuration (GET|PUT /api/agents/:id/config) on agents without a
// container: what the owner sees, what is refused (400, nothing changed), and the job that applies
// a save. Applying it to a running or stopped container is in the lifecycle scenario (both drivers).

async function agentOf(
  userId: string,
  plan: string,
  tools: 'coding' | 'messaging',
  status: 'running' | 'provisioning' | 'pending' = 'running',
) {
  return systemDb()
    .insertInto('agents')
    .values({
      user_id: userId,
      name: 'Configured',
      status,
      plan,
      model: 'openrouter/auto',
      tools_profile: tools,
      subdomain: `c-${randomUUID().slice(0, 8)}`,
      updated_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
const rowOf = (id: string) =>
  systemDb()
    .selectFrom('agents')
    .select(['config', 'updated_at', 'tools_profile'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

t.test('agent configuration routes', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-agent-config-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, { RUNTIME_DRIVER: 'process', RUNTIME_DATA_DIR: dataDir });
  const { app } = h;
  const owner = await createUserRow({ plan: 'solo' });
  const other = await createUserRow({ plan: 'solo' });
  const agent = await agentOf(owner.id, 'solo', 'messaging');
  const url = `/api/agents/${agent.id}/config`;

  await t.test(
    "without a saved one: the plan's defaults, with the tools profile fixed at creation, and the file its gateway gets",
    async (t) => {
      const res = await app.inject({ method: 'GET', url, headers: web(owner) });
      t.equal(res.statusCode, 200, res.body);
      const body = res.json();
      t.match(body, {
        agentId: agent.id,
        isDefault: true,
        updatedAt: new Date(agent.updated_at).toISOString(),
        model: /^openrouter\/auto$/,
        checkedBy: /^openclaw@2026\.9\.6$/,
        backups: [],
      });
      t.same(body.config, {
        logging: { level: 'info' },
        agents: { defaults: { model: 'openrouter/moonshotai/kimi-k2.5', workspace: '/home/node/.openclaw/workspace' } },
        tools: { profile: 'messaging' },
        gateway: { bind: 'lan', auth: { mode: 'token' } },
        channels: {
          whatsapp: { allowFrom: [] },
          telegram: { enabled: false },
          discord: { enabled: false },
          webchat: { enabled: true },
        },
        session: { dmScope: 'per-channel-peer', resetTriggers: ['/new', '/reset'] },
        skills: { install: { nodeManager: 'npm' } },
      });
      t.has(body.appliedConfig, {
        logging: { level: 'info' },
        agents: { defaults: { model: 'agentyard/openrouter/auto' } },
        tools: { profile: 'messaging' },
        gateway: { mode: 'local' },
      });
      t.equal(body.appliedConfig.gateway.auth.token, '<set by the platform>', 'no secret in the answer');
      t.equal(body.appliedConfig.models.providers.agentyard.apiKey, '<set by the platform>');
      const coder = await agentOf(owner.id, 'label', 'coding');
      t.equal(
        (await app.inject({ method: 'GET', url: `/api/agents/${coder.id}/config`, headers: web(owner) })).json().config
          .tools.profile,
        'coding',
      );
    },
  );

  await t.test(
    'a save replaces the configuration, is shown back, backs up the previous one and queues one apply job holding no secret',
    async (t) => {
      const config = {
        logging: { level: 'debug' },
        channels: { telegram: { enabled: true, allowFrom: ['@ana'] } },
        session: { resetTriggers: ['/again'] },
      };
      const res = await app.inject({
        method: 'PUT',
        url,
        headers: { ...web(owner), 'x-request-id': 'config-save-request' },
        payload: { config },
      });
      t.equal(res.statusCode, 200, res.body);
      const body = res.json();
      t.has(body, {
        success: true,
        agentId: agent.id,
        config,
        model: 'openrouter/auto',
        applied: 'next-start',
        checkedBy: 'openclaw@2026.9.6',
      });
      t.same(
        body.backups.map((b: { id: string }) => b.id),
        [body.backupId],
        'the previous configuration is the one backup',
      );
      t.same((await rowOf(agent.id)).config, config, 'stored as sent');
      t.has((await app.inject({ method: 'GET', url, headers: web(owner) })).json(), {
        isDefault: false,
        config,
        updatedAt: body.updatedAt,
        appliedConfig: { logging: { level: 'debug' } },
      });
      t.equal(
        await h.configApplied(agent.id, body.updatedAt),
        'no container',
        'the job ran: no container to apply it to yet',
      );
      const job = await h.queues.get(QUEUES.lifecycle).getJob(configApplyJobId(agent.id, body.updatedAt));
      t.same(
        job?.data,
        { agentId: agent.id, reload: 'restart', queuedBy: 'config-save-request' },
        'the job names the agent, how to apply and the request that queued it, nothing else',
      );

      const encoded = await app.inject({
        method: 'PUT',
        url,
        headers: web(owner),
        payload: { config: JSON.stringify({ logging: { level: 'warn' } }) },
      });
      t.equal(encoded.statusCode, 200, 'a JSON-encoded configuration is accepted too');
      t.same((await rowOf(agent.id)).config, { logging: { level: 'warn' } });
    },
  );

  await t.test('the common fields are set on the current document, the model on the agent', async (t) => {
    const res = await app.inject({
      method: 'PUT',
      url,
      headers: web(owner),
      payload: {
        model: 'anthropic/claude-haiku-4-5',
        logLevel: 'error',
        channels: { telegram: true, discord: false },
        resetTriggers: ['/fresh'],
        dmPolicy: 'allowlist',
      },
    });
    t.equal(res.statusCode, 200, res.body);
    const expected = {
      logging: { level: 'error' },
      channels: { telegram: { enabled: true, dmPolicy: 'allowlist' }, discord: { enabled: false } },
      session: { resetTriggers: ['/fresh'] },
    };
    t.same(
      res.json().config,
      { ...expected, tools: { profile: 'messaging' } },
      'the warn level replaced, the rest added (and the tools profile fixed at creation shown)',
    );
    t.equal(res.json().model, 'anthropic/claude-haiku-4-5');
    const view = (await app.inject({ method: 'GET', url, headers: web(owner) })).json();
    t.equal(
      view.appliedConfig.agents.defaults.model,
      'agentyard/anthropic/claude-haiku-4-5',
      "the gateway's model follows",
    );
    t.equal(view.appliedConfig.channels.telegram.dmPolicy, 'allowlist');
    const row = await systemDb()
      .selectFrom('agents')
      .select('model')
      .where('id', '=', agent.id)
      .executeTakeFirstOrThrow();
    t.equal(row.model, 'anthropic/claude-haiku-4-5');
  });

  await t.test(
    'backups: the 10 newest kept, listed newest first; a restore brings one back (model too) and backs up the current one',
    async (t) => {
      // Ten older backups (as ten saves an hour apart would leave), then one more save.
      const earlier = Array.from({ length: 10 }, (_, i) => ({
        id: `acb_earlier${i}`,
        agent_id: agent.id,
        user_id: owner.id,
        config: { logging: { level: 'trace' }, session: { resetTriggers: [`/r${i}`] } },
        model: 'openrouter/auto',
        created_at: new Date(Date.now() - (i + 1) * 3_600_000),
      }));
      await systemDb().insertInto('agent_config_backups').values(earlier).execute();
      t.equal(
        (await app.inject({ method: 'PUT', url, headers: web(owner), payload: { logLevel: 'warn' } })).statusCode,
        200,
      );
      const list = await app.inject({ method: 'GET', url: `${url}/backups`, headers: web(owner) });
      t.equal(list.statusCode, 200, list.body);
      const { backups } = list.json();
      t.equal(backups.length, 10, 'ten kept');
      t.ok(
        backups.every((b: { timestamp: string }, i: number) => i === 0 || b.timestamp <= backups[i - 1].timestamp),
        'newest first',
      );
      const stored10 = await systemDb()
        .selectFrom('agent_config_backups')
        .select('id')
        .where('agent_id', '=', agent.id)
        .execute();
      t.equal(stored10.length, 10, 'and no more stored');
      t.notOk(
        stored10.some((b) => b.id === 'acb_earlier9'),
        'the oldest went',
      );
      const oldest = backups[8]; // the one after the oldest: the save below pushes the oldest out
      const stored = await systemDb()
        .selectFrom('agent_config_backups')
        .select(['config', 'model'])
        .where('id', '=', oldest.id)
        .executeTakeFirstOrThrow();
      await app.inject({ method: 'PUT', url, headers: web(owner), payload: { model: 'openai/gpt-4o-mini' } });

      const restored = await app.inject({
        method: 'POST',
        url: `${url}/restore`,
        headers: web(owner),
        payload: { backupId: oldest.id },
      });
      t.equal(restored.statusCode, 200, restored.body);
      t.match(restored.json(), {
        restoredFrom: oldest.id,
        config: stored.config,
        model: stored.model,
        applied: /^next-start$/,
      });
      t.same((await rowOf(agent.id)).config, stored.config);
      t.equal(
        restored.json().backups[0].id,
        restored.json().backupId,
        'the configuration before the restore is the newest backup',
      );
      t.equal(restored.json().backups[0].model, 'openai/gpt-4o-mini');

      const before = await rowOf(agent.id);
      const unknown = await app.inject({
        method: 'POST',
        url: `${url}/restore`,
        headers: web(owner),
        payload: { backupId: 'acb_nope' },
      });
      t.equal(unknown.statusCode, 404);
      t.match(unknown.json(), { error: 'Backup not found' });
      const malformed = await app.inject({
        method: 'POST',
        url: `${url}/restore`,
        headers: web(owner),
        payload: { backupId: 'bkp_x', extra: 1 },
      });
      t.equal(malformed.statusCode, 400);
      const elsewhere = await app.inject({
        method: 'POST',
        url: `${url}/restore`,
        headers: web(other),
        payload: { backupId: backups[0].id },
      });
      t.equal(elsewhere.statusCode, 404, "another user cannot restore this agent's backup");
      t.equal(
        (await app.inject({ method: 'GET', url: `${url}/backups`, headers: web(other) })).statusCode,
        404,
        'nor list them',
      );
      t.same(await rowOf(agent.id), before, 'nothing changed');
    },
  );

  await t.test('bad input is a 400 naming the problem and changes nothing', async (t) => {
    const before = await rowOf(agent.id);
    const cases: [string, unknown, string | RegExp][] = [
      ['no config', {}, 'Invalid config object'],
      ['config not an object', { config: [1, 2] }, 'Invalid config object'],
      ['config a string that is not JSON', { config: '{logging' }, 'Config is not valid JSON'],
      [
        'a key OpenClaw does not know, in its own words',
        { config: { logging: { level: 'info', colour: 'red' } } },
        'Invalid config: logging: Unrecognized key: "colour"',
      ],
      [
        'a value OpenClaw refuses, named by its path',
        { config: { session: { dmScope: 'everyone' } } },
        /^Invalid config: session\.dmScope: Invalid option/,
      ],
      [
        'a key OpenClaw knows that the platform does not keep',
        { config: { cron: { enabled: true } } },
        'Invalid config: unknown key cron',
      ],
      ['a log level that is none', { logLevel: 'loud' }, 'Invalid request body'],
      ['a model that is no id', { model: 'not a model' }, 'Invalid request body'],
      [
        'a key the platform sets',
        { config: { gateway: { auth: { token: 'mine' } } } },
        'Invalid config: gateway.auth.token is set by the platform',
      ],
      [
        'another tools profile',
        { config: { tools: { profile: 'coding' } } },
        'Invalid config: tools.profile is fixed at creation (messaging)',
      ],
      ['an extra field', { config: {}, plan: 'network' }, 'Invalid request body'],
      ['a body that is not JSON', 'config=1', 'Invalid request body'],
    ];
    for (const [what, payload, error] of cases) {
      const res = await app.inject({
        method: 'PUT',
        url,
        headers: { ...web(owner), 'content-type': 'application/json' },
        payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      });
      t.equal(res.statusCode, 400, `${what}: ${res.body}`);
      t.match(res.json(), { error }, what);
    }
    t.same(await rowOf(agent.id), before, 'the agent is as it was');
  });

  await t.test("another user's agent, an unknown agent and a bad id: 404 or 400, and nothing changes", async (t) => {
    const before = await rowOf(agent.id);
    t.equal((await app.inject({ method: 'GET', url, headers: web(other) })).statusCode, 404);
    const put = await app.inject({
      method: 'PUT',
      url,
      headers: web(other),
      payload: { config: { logging: { level: 'debug' } } },
    });
    t.equal(put.statusCode, 404);
    t.match(put.json(), { error: 'Agent not found' });
    const badConfigElsewhere = await app.inject({
      method: 'PUT',
      url,
      headers: web(other),
      payload: { config: { nonsense: true } },
    });
    t.equal(badConfigElsewhere.statusCode, 404, 'not owned comes before the configuration is looked at');
    t.equal(
      (await app.inject({ method: 'GET', url: `/api/agents/${randomUUID()}/config`, headers: web(owner) })).statusCode,
      404,
    );
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/agents/not-a-uuid/config', headers: web(owner) })).statusCode,
      400,
    );
    t.same(await rowOf(agent.id), before);
  });

  await t.test('the backend PUT keeps the same rules and applies a configuration the same way', async (t) => {
    const before = await rowOf(agent.id);
    const refused = await app.inject({
      method: 'PUT',
      url: `/api/agents/${agent.id}`,
      headers: backend(owner),
      payload: { config: { tools: { profile: 'coding' } } },
    });
    t.equal(refused.statusCode, 400);
    t.match(refused.json(), { error: 'Invalid config: tools.profile is fixed at creation (messaging)' });
    t.same(await rowOf(agent.id), before, 'nothing changed');

    const res = await app.inject({
      method: 'PUT',
      url: `/api/agents/${agent.id}`,
      headers: backend(owner),
      payload: { config: { logging: { level: 'error' } } },
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().message, 'Agent updated; its container takes the new configuration in the background');
    const saved = await rowOf(agent.id);
    t.equal(await h.configApplied(agent.id, new Date(saved.updated_at).toISOString()), 'no container');
    const planOnly = await app.inject({
      method: 'PUT',
      url: `/api/agents/${agent.id}`,
      headers: backend(owner),
      payload: { plan: 'collective' },
    });
    t.equal(planOnly.json().message, 'Agent updated');
    t.same((await rowOf(agent.id)).config, { logging: { level: 'error' } }, 'a plan change keeps the configuration');
  });

  await t.test(
    "a save while the agent's provisioning job has still to run: its job waits (delayed, no attempt spent), then runs once provisioning has ended",
    async (t) => {
      const provisioning = await agentOf(owner.id, 'solo', 'messaging', 'provisioning');
      // Its provisioning job, waiting for a retry (as after a failed attempt).
      const provisionJob = await h.queues
        .get(QUEUES.provisioning)
        .add(PROVISION_JOB, { agentId: provisioning.id }, { jobId: provisionJobId(provisioning.id), delay: 600_000 });
      const savedAt = new Date(provisioning.updated_at).toISOString();
      const jobId = configApplyJobId(provisioning.id, savedAt);
      await enqueueConfigApply(h.queues, provisioning.id, provisioning.updated_at);
      await h.configWaiting(provisioning.id, savedAt);
      t.equal(await h.queues.get(QUEUES.lifecycle).getJobState(jobId), 'delayed', 'waiting, not failed');
      const job = await h.queues.get(QUEUES.lifecycle).getJob(jobId);
      t.equal(job?.attemptsMade, 0, 'waiting spends no attempt');
      await provisionJob.remove();
      t.equal(await h.configApplied(provisioning.id, savedAt), 'no container');
    },
  );

  await t.test(
    'a save for an agent with no provisioning job (created pending with the kill switch on): applied at once, its first container reads it',
    async (t) => {
      const pending = await agentOf(owner.id, 'solo', 'messaging', 'pending');
      await enqueueConfigApply(h.queues, pending.id, pending.updated_at);
      t.equal(await h.configApplied(pending.id, new Date(pending.updated_at).toISOString()), 'no container');
    },
  );
});

t.test(
  'apply jobs run by two worker processes at once: one rebuild at a time, one container, the saved configuration',
  async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-agent-config-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
    const h = await startAgents(t, {
      RUNTIME_DRIVER: 'process',
      RUNTIME_DATA_DIR: dataDir,
      AGENT_IMAGE: gateway,
      AGENT_PORT_RANGE: '35000-35999',
      AGENT_READY_TIMEOUT_MS: '30000',
    });
    // A second set of workers on the same queues, as a second worker process would be.
    const second = await startWorkers(h.config);
    t.teardown(() => second.close());
    const owner = await h.subscribedUser('label');
    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'Busy' },
    });
    const id: string = provisioned.json().agent.id;
    t.match(await h.provisioned(id), /^running/);

    const before = (await h.agentRow(id))!.container_id;
    const res = await h.app.inject({
      method: 'PUT',
      url: `/api/agents/${id}/config`,
      headers: web(owner),
      payload: { config: { logging: { level: 'error' } } },
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().applied, 'restart', 'the minimal gateway does not watch its config: its container is rebuilt');
    // Three apply jobs at the same moment (as quick saves make them), so both worker sets rebuild at once.
    const savedAt = Date.parse(res.json().updatedAt);
    const moments = [savedAt + 1, savedAt + 2, savedAt + 3].map((ms) => new Date(ms));
    await Promise.all(moments.map((at) => enqueueConfigApply(h.queues, id, at)));
    const outcomes = await Promise.all(
      [savedAt, ...moments.map(Number)].map((ms) => h.configApplied(id, new Date(ms).toISOString())),
    );
    t.ok(
      outcomes.every((o) => o === 'applied'),
      outcomes.join(', '),
    );
    const containers = await h.driver.list({ agentId: id });
    t.equal(containers.length, 1, 'one container');
    t.equal((await h.agentRow(id))!.container_id, containers[0]!.id, 'the recorded one');
    t.not(containers[0]!.id, before, 'a new container');
    t.equal((await h.agentRow(id))!.status, 'running', 'running again after the rebuild');
    const written = JSON.parse(
      await readFile(join(dataDir, h.config.RUNTIME_INSTANCE, id, 'home', '.openclaw', 'openclaw.json'), 'utf8'),
    );
    t.equal(written.logging.level, 'error', 'the saved configuration is the one running');
    t.ok(await h.runtime.waitUntilReady((await h.agentRow(id))!.gateway_url!), 'and it answers');
  },
);

t.test('with the job queue gone, a save and a provisioning answer 503 and change nothing', async (t) => {
  const relay = await startRelay(process.env.REDIS_URL!);
  const app = await build(t, { REDIS_URL: relay.url, PROVISIONING_ENABLED: 'true' });
  const owner = await createUserRow({ plan: 'solo' });
  const agent = await agentOf(owner.id, 'solo', 'messaging');
  const before = await rowOf(agent.id);
  await relay.goDown();

  const saved = await app.inject({
    method: 'PUT',
    url: `/api/agents/${agent.id}/config`,
    headers: web(owner),
    payload: { config: { logging: { level: 'debug' } } },
  });
  t.equal(saved.statusCode, 503);
  t.same(saved.json(), { error: 'Job queue unavailable, try again shortly' });
  t.same(await rowOf(agent.id), before, 'the stored configuration is unchanged');

  const provisioned = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: 'Not now' },
  });
  t.equal(provisioned.statusCode, 503);
  t.same(provisioned.json(), { error: 'Job queue unavailable, try again shortly' });
  const agents = await systemDb().selectFrom('agents').select('id').where('user_id', '=', owner.id).execute();
  t.same(
    agents.map((a) => a.id),
    [agent.id],
    'no agent was created',
  );
});
