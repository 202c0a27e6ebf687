import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { repoRoot } from '@agentyard/config';
import { QUEUES } from '@agentyard/queue';
import { agentOperations } from '../../src/domain/runtime/agent-operations.ts';
import { configApplyJobId } from '../../src/domain/runtime/config-apply.ts';
import { createRuntimeContext } from '../../src/domain/runtime/privileged/runtime-context.ts';
import { backend, startAgents, web } from '../agents-harness.ts';

// Operations on one agent's container take turns across every process of the platform: lifecycle
// requests in API processes, configuration and provisioning jobs in workers. Real processes of the
// minimal gateway (process driver) stand in for containers.

const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');

async function runningAgent(t: Test, env: Record<string, string>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-agent-operations-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_READY_TIMEOUT_MS: '30000',
    ...env,
  });
  const owner = await h.subscribedUser('label');
  const provisioned = await h.app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: 'Contended' },
  });
  const id: string = provisioned.json().agent.id;
  t.match(await h.provisioned(id), /^running/);
  return { h, owner, id };
}

t.test(
  'lifecycle requests from two API processes and a configuration job at once: one at a time, one container, the recorded one, running',
  async (t) => {
    const { h, owner, id } = await runningAgent(t, { AGENT_PORT_RANGE: '36000-36499' });
    // A second API process's runtime on the same database, Redis and engine.
    const other = createRuntimeContext(h.config, { warn() {}, error() {} });
    t.teardown(() => other.close());
    const saved = await h.app.inject({
      method: 'PUT',
      url: `/api/agents/${id}/config`,
      headers: web(owner),
      payload: { config: { logging: { level: 'warn' } } },
    });
    t.equal(saved.statusCode, 200, saved.body);

    const lifecycle = (action: string) =>
      h.app.inject({ method: 'POST', url: `/api/agents/${id}/${action}`, headers: backend(owner) });
    const [requests] = await Promise.all([
      Promise.all([lifecycle('repair'), lifecycle('restart'), lifecycle('repair')]),
      other.runtime.repair(id),
      other.runtime.start(id),
    ]);
    for (const res of requests) t.equal(res.statusCode, 200, res.body);
    t.equal(await h.configApplied(id, saved.json().updatedAt), 'applied');

    const containers = await h.driver.list({ agentId: id });
    t.equal(containers.length, 1, 'one container');
    const row = (await h.agentRow(id))!;
    t.equal(row.container_id, containers[0]!.id, 'the recorded one');
    t.equal(row.status, 'running');
    t.equal((await h.driver.inspect(row.container_id!))?.state, 'running');
    t.ok(await h.runtime.waitUntilReady(row.gateway_url!), 'and its gateway answers');
  },
);

t.test(
  'another operation under way: a request waits AGENT_OPERATION_WAIT_MS, then answers 409 and changes nothing; a job waits its turn without spending an attempt',
  async (t) => {
    const { h, owner, id } = await runningAgent(t, { AGENT_PORT_RANGE: '36500-36999', AGENT_OPERATION_WAIT_MS: '300' });
    const before = (await h.agentRow(id))!;
    // An operation of another process, held open until the test lets it go.
    const other = await h.holdOperation(id);

    for (const action of ['stop', 'repair', 'restart']) {
      const res = await h.app.inject({ method: 'POST', url: `/api/agents/${id}/${action}`, headers: backend(owner) });
      t.equal(res.statusCode, 409, `${action}: ${res.body}`);
      t.same(res.json(), {
        error: 'Another operation on this agent is under way; try again shortly',
        code: 'AGENT_BUSY',
      });
    }
    const untouched = (await h.agentRow(id))!;
    t.equal(untouched.container_id, before.container_id, 'the same container');
    t.equal(untouched.status, 'running');
    t.equal((await h.driver.inspect(before.container_id!))?.state, 'running', 'still running');

    const saved = await h.app.inject({
      method: 'PUT',
      url: `/api/agents/${id}/config`,
      headers: web(owner),
      payload: { config: { logging: { level: 'debug' } } },
    });
    await h.configWaiting(id, saved.json().updatedAt);
    t.equal(
      (await h.queues.get(QUEUES.lifecycle).getJob(configApplyJobId(id, saved.json().updatedAt)))?.attemptsMade,
      0,
      'waiting spends no attempt',
    );

    await other.release();
    t.equal(await h.configApplied(id, saved.json().updatedAt), 'applied', 'applied once the other operation is done');
    t.not((await h.agentRow(id))!.container_id, before.container_id, 'a new container with the saved configuration');
    t.equal((await h.driver.list({ agentId: id })).length, 1, 'and only it');
  },
);

t.test('without Redis an operation does not run: 503, not a 500', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const redis = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => {});
  t.teardown(() => redis.disconnect());
  const exclusive = agentOperations({ redis, prefix: 'no-redis', waitMs: 1000, log: { error() {} } });
  let ran = false;
  await t.rejects(
    exclusive('6f1c2a52-32a8-4a8e-9a38-1b1b6f1d1e11', async () => {
      ran = true;
    }),
    { statusCode: 503, message: 'Agent operations are temporarily unavailable' },
  );
  t.notOk(ran, 'the operation did not run');
});
