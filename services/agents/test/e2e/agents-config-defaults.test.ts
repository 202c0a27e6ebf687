import t from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { startAgents, web } from '../agents-harness.ts';

// `/api/config` is its user's defaults for new agents: merged into each agent's
// configuration when it is provisioned, and applied to no agent that exists already.

t.setTimeout(600_000);

t.test('a default saved at /api/config reaches the next agent and no existing one', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-config-defaults-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_PORT_RANGE: '36000-36999',
    AGENT_READY_TIMEOUT_MS: '30000',
  });
  const owner = await h.subscribedUser('label');
  const provision = async (name: string) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name },
    });
    t.equal(res.statusCode, 201, res.body);
    const id: string = res.json().agent.id;
    t.match(await h.provisioned(id), /^running/);
    return id;
  };
  /** The openclaw.json the agent's gateway runs with (the process driver's home of the agent). */
  const written = async (id: string) =>
    JSON.parse(
      await readFile(join(dataDir, h.config.RUNTIME_INSTANCE, id, 'home', '.openclaw', 'openclaw.json'), 'utf8'),
    );
  const applied = async (id: string) =>
    (await h.app.inject({ method: 'GET', url: `/api/agents/${id}/config`, headers: web(owner) })).json().appliedConfig;

  const existing = await provision('Before the defaults');
  const fileBefore = await written(existing);
  t.equal(fileBefore.logging.level, 'info', "the platform's level before any default");

  const defaults = { logging: { level: 'debug' }, session: { resetTriggers: ['/fresh'] }, tools: { profile: 'full' } };
  const saved = await h.app.inject({
    method: 'POST',
    url: '/api/config',
    headers: web(owner),
    payload: { config: defaults },
  });
  t.equal(saved.statusCode, 200, saved.body);

  const next = await provision('After the defaults');
  const nextFile = await written(next);
  t.equal(nextFile.logging.level, 'debug', "the default log level is in the next agent's running configuration");
  t.same(nextFile.session.resetTriggers, ['/fresh'], 'and its reset triggers');
  t.equal(nextFile.tools.profile, 'coding', "the tools profile stays the plan's (fixed at creation)");
  t.has(
    await applied(next),
    { logging: { level: 'debug' }, session: { resetTriggers: ['/fresh'] } },
    'as its configuration page shows',
  );
  const nextRow = await h.agentRow(next);
  t.same(
    nextRow!.config,
    { logging: { level: 'debug' }, session: { resetTriggers: ['/fresh'] } },
    "stored as the new agent's own configuration",
  );

  t.same(await written(existing), fileBefore, "the existing agent's running configuration is untouched");
  t.has(
    await applied(existing),
    { logging: { level: 'info' }, session: { resetTriggers: ['/new', '/reset'] } },
    'and so is what its page shows',
  );
  t.same((await h.agentRow(existing))!.config, {}, 'and its stored configuration');
});
