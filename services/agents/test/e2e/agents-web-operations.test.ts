import t from 'tap';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { systemDb } from '@agentyard/testing';
import { agentStatusEvents, type AgentStatusEvent } from '../../src/domain/telemetry/status-events.ts';
import { startAgents, web } from '../agents-harness.ts';

// Every lifecycle operation an owner has on the web: queued (202) through the same lifecycle as
// the backend's, the outcome on the owner's event stream; delete; and an agent in error, which
// holds no plan slot and can be repaired or deleted. Real processes of the minimal gateway
// (process driver) stand in for containers.

const gateway = join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs');
// Offered beside the default for an update (never started here: the process driver runs scripts).
const offered = 'localhost/agentyard-offered:1';

t.test('web lifecycle operations, delete, and the agent in error', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-web-operations-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const h = await startAgents(t, {
    RUNTIME_DRIVER: 'process',
    RUNTIME_DATA_DIR: dataDir,
    AGENT_IMAGE: gateway,
    AGENT_IMAGES_ALLOWED: offered,
    AGENT_PORT_RANGE: '37000-37499',
    AGENT_READY_TIMEOUT_MS: '30000',
  });
  const events = agentStatusEvents(h.config.DATABASE_SYSTEM_URL, { warn() {} });
  t.teardown(() => events.close());
  const owner = await h.subscribedUser('solo');
  const other = await h.subscribedUser('label');

  /** Resolves with the event telling how `action` on `agentId` ended (listening before it is asked for). */
  const outcomeOf = async (agentId: string, action: string) => {
    let seen!: (event: AgentStatusEvent) => void;
    const ended = new Promise<AgentStatusEvent>((resolve) => (seen = resolve));
    const unsubscribe = await events.subscribe(owner.id, {
      change: (event) => {
        if (event.agentId === agentId && event.action === action) seen(event);
      },
      relisten() {},
    });
    return { ended: ended.finally(unsubscribe) }; // wrapped: awaiting this call must not wait for the event
  };
  const act = (user: { id: string; email: string }, id: string, action: string, payload?: object) =>
    h.app.inject({
      method: 'POST',
      url: `/api/agents/${id}/${action}`,
      headers: web(user),
      ...(payload ? { payload } : {}),
    });
  const actAndWait = async (id: string, action: string, payload?: object) => {
    const { ended } = await outcomeOf(id, action);
    const res = await act(owner, id, action, payload);
    t.equal(res.statusCode, 202, `${action}: ${res.body}`);
    t.same(res.json(), { id, action, status: 'queued' }, `${action} is queued`);
    return ended;
  };

  const provisioned = await h.app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: 'Owned' },
  });
  t.equal(provisioned.statusCode, 201, provisioned.body);
  const id: string = provisioned.json().agent.id;

  await t.test('while it is being provisioned, an operation is refused (409) and nothing is queued', async (t) => {
    const res = await act(owner, id, 'restart');
    t.equal(res.statusCode, 409, res.body);
    t.equal(res.json().code, 'AGENT_PROVISIONING');
  });
  t.match(await h.provisioned(id), /^running/);

  await t.test("another user's agent is 404 for every operation and for delete, and nothing changes", async (t) => {
    const before = (await h.agentRow(id))!;
    for (const action of ['start', 'stop', 'restart', 'repair', 'reset-memory', 'update']) {
      const res = await act(other, id, action, action === 'update' ? {} : undefined);
      t.equal(res.statusCode, 404, `${action}: ${res.body}`);
      t.match(res.json(), { error: 'Agent not found' });
    }
    const del = await h.app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(other) });
    t.equal(del.statusCode, 404, del.body);
    const after = (await h.agentRow(id))!;
    t.equal(after.status, 'running');
    t.equal(after.container_id, before.container_id, 'the same container');
    t.equal(after.updated_at.getTime(), before.updated_at.getTime(), 'the row untouched');
  });

  await t.test('the owner reads the image it runs and those it may update to', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(owner) });
    t.equal(res.statusCode, 200, res.body);
    t.same(
      res.json().agent.images,
      { current: gateway, allowed: [gateway, offered] },
      'the default image first, then AGENT_IMAGES_ALLOWED',
    );
  });

  await t.test('bad input is a 4xx and changes nothing', async (t) => {
    const notUuid = await act(owner, 'not-a-uuid', 'restart');
    t.equal(notUuid.statusCode, 400);
    const spaced = await act(owner, id, 'update', { image: 'an image' });
    t.equal(spaced.statusCode, 400);
    const notOffered = await act(owner, id, 'update', { image: 'docker.io/someone/else:latest' });
    t.equal(notOffered.statusCode, 400, notOffered.body);
    t.same(notOffered.json(), { error: 'That image is not one this platform offers', code: 'IMAGE_NOT_ALLOWED' });
    const extra = await act(owner, id, 'update', { image: gateway, force: true });
    t.equal(extra.statusCode, 400);
    t.equal((await h.agentRow(id))!.status, 'running');
  });

  await t.test(
    'restart, stop, start, repair, reset memory and update: each queued, each ends done, the gateway answers after',
    async (t) => {
      const restarted = await actAndWait(id, 'restart');
      t.has(restarted, { agentId: id, action: 'restart', outcome: 'done', status: 'running' });
      const row = (await h.agentRow(id))!;
      t.ok(await h.runtime.waitUntilReady(row.gateway_url!), 'answers after the restart');
      t.has(
        await actAndWait(id, 'restart'),
        { action: 'restart', outcome: 'done' },
        'asked again once its outcome arrived, it runs again',
      );

      t.has(await actAndWait(id, 'stop'), { outcome: 'done', status: 'stopped' });
      t.equal((await h.agentRow(id))!.status, 'stopped');
      t.has(await actAndWait(id, 'start'), { outcome: 'done', status: 'running' });
      t.has(await actAndWait(id, 'repair'), { outcome: 'done', status: 'running' });
      t.has(await actAndWait(id, 'reset-memory'), { outcome: 'done', status: 'running' });
      t.has(
        await actAndWait(id, 'update', { image: gateway }),
        { outcome: 'done', status: 'running' },
        'the default image is always offered',
      );
      const now = (await h.agentRow(id))!;
      t.equal(now.image, gateway);
      t.ok(await h.runtime.waitUntilReady(now.gateway_url!), 'answers after them all');
    },
  );

  await t.test('an agent in error holds no plan slot; the owner repairs it, or deletes it', async (t) => {
    const db = systemDb();
    const failed = async (agentId: string) => {
      const row = (await h.agentRow(agentId))!;
      if (row.container_id) await h.driver.remove(row.container_id);
      await db
        .updateTable('agents')
        .set({
          status: 'error',
          last_error: 'The agent could not start',
          container_id: null,
          host_port: null,
          gateway_url: null,
        })
        .where('id', '=', agentId)
        .execute();
    };
    await failed(id);
    // Solo: one agent. The one in error does not count, so another can be provisioned…
    const second = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'Second' },
    });
    t.equal(second.statusCode, 201, second.body);
    const secondId: string = second.json().agent.id;
    t.match(await h.provisioned(secondId), /^running/);
    // …and while that one runs, repairing the first is refused at once by the plan.
    const refused = await act(owner, id, 'repair');
    t.equal(refused.statusCode, 429, refused.body);
    t.equal(refused.json().code, 'AGENT_LIMIT');

    // With the slot free again, the first is repaired from the web.
    const stopped = await actAndWait(secondId, 'stop');
    t.equal(stopped.outcome, 'done');
    const repaired = await actAndWait(id, 'repair');
    t.has(repaired, { outcome: 'done', status: 'running' });
    t.ok(await h.runtime.waitUntilReady((await h.agentRow(id))!.gateway_url!), 'the repaired agent answers');

    // Starting the stopped one is refused at once too: the repaired one holds the slot.
    const startRefused = await act(owner, secondId, 'start');
    t.equal(startRefused.statusCode, 429, 'refused before it is queued');

    // In error again, it is deleted from the web.
    await failed(id);
    await db
      .insertInto('usage_events')
      .values({
        id: randomUUID(),
        user_id: owner.id,
        user_ref: owner.id,
        agent_id: id,
        model: 'm',
        provider: 'p',
        input_tokens: 1,
        output_tokens: 1,
        total_tokens: 2,
        cost_usd: null,
        turn_count: 1,
        occurred_at: new Date(),
        day: new Date().toISOString().slice(0, 10),
      })
      .execute();
    await db
      .insertInto('scheduled_tasks')
      .values({ user_id: owner.id, agent_id: id, name: 'daily', cron_schedule: '0 9 * * *', prompt: 'hi' })
      .execute();
    const deleted = await h.app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(owner) });
    t.equal(deleted.statusCode, 200, deleted.body);
    t.same(deleted.json(), { id, deleted: true });
    t.equal(
      (await h.app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(owner) })).statusCode,
      404,
      'GET is 404 afterwards',
    );
    const list = await h.app.inject({ method: 'GET', url: '/api/agents', headers: web(owner) });
    t.notOk(
      list.json().agents.some((a: { id: string }) => a.id === id),
      'the list lacks it',
    );
    t.same(await h.driver.list({ agentId: id }), [], 'no container left');
    t.notOk(
      await db.selectFrom('scheduled_tasks').select('id').where('agent_id', '=', id).executeTakeFirst(),
      'its schedules went with it',
    );
    t.ok(
      await db.selectFrom('usage_events').select('id').where('agent_id', '=', id).executeTakeFirst(),
      'its usage rows stay (billing)',
    );

    const again = await h.app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(owner) });
    t.equal(again.statusCode, 200, 'deleting again answers as the first time');
    t.same(again.json(), { id, deleted: true });
    const othersDelete = await h.app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: web(other) });
    t.equal(othersDelete.statusCode, 404, "a deleted agent's id is still 404 to anyone else");
    const never = await h.app.inject({ method: 'DELETE', url: `/api/agents/${randomUUID()}`, headers: web(owner) });
    t.equal(never.statusCode, 404, 'an id that was never theirs is 404');
  });
});
