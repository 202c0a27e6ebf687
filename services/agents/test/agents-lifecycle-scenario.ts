import type { Test } from 'tap';
import WebSocket from 'ws';
import { backend, web, type startAgents } from './agents-harness.ts';

/** How a test looks at an agent's runtime from outside the platform (the engine, /proc, the port). */
export interface RuntimeObserver {
  state(agentId: string): Promise<'running' | 'stopped' | 'absent'>;
  image(agentId: string): Promise<string | null>;
  writeMemory(agentId: string): Promise<void>;
  memoryExists(agentId: string): Promise<boolean>;
  /** The OpenClaw config file the agent's container (or process) was given, as written. */
  configText(agentId: string): Promise<string>;
}

type Harness = Awaited<ReturnType<typeof startAgents>>;

/**
 * An agent's whole lifecycle on one driver: provision → running, the runtime proxy over HTTP
 * and WebSocket, isolation between users, stop/start/restart, update with rollback, reset memory,
 * repair, a saved configuration applied, delete; each step checked on the runtime itself through `observer`.
 */
export async function lifecycleScenario(
  t: Test,
  h: Harness,
  observer: RuntimeObserver,
  images: { good: string; broken: string },
) {
  const { app } = h;
  const owner = await h.subscribedUser('label');
  const other = await h.subscribedUser('label');

  const provision = await app.inject({
    method: 'POST',
    url: '/api/agents/provision',
    headers: web(owner),
    payload: { name: '  Scout  ', tier: 'pro' },
  });
  t.equal(provision.statusCode, 201, provision.body);
  const { agent } = provision.json();
  t.equal(agent.status, 'provisioning', 'created at once as provisioning');
  t.equal(agent.name, 'Scout');
  t.equal(agent.model, 'claude-opus-4-6');
  const id: string = agent.id;

  t.match(await h.provisioned(id), /^running/);
  t.match(
    (await app.inject({ method: 'GET', url: '/api/runtime/version', headers: backend() })).json(),
    { reachable: true },
    'the runtime answers',
  );
  const row = (await h.agentRow(id))!;
  t.equal(row.status, 'running');
  t.equal(row.ai_provider, 'anthropic', 'claude-opus-4-6 runs on anthropic');
  t.equal(row.plan, 'collective', 'tier pro → collective');
  t.equal(row.tools_profile, 'coding');
  t.ok(row.host_port && row.container_id && row.gateway_token_sealed && row.hooks_token_sealed && row.ai_key_hash);
  t.notMatch(row.gateway_token_sealed!, /^[A-Za-z0-9_-]{43}$/, 'the gateway token is stored sealed');
  t.equal(await observer.state(id), 'running');

  const detail = await app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(owner) });
  t.equal(detail.json().agent.status, 'running');
  t.equal(detail.json().status, 'ok');
  const backendDetail = await app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: backend() });
  t.equal(backendDetail.json().id, id);
  t.equal(backendDetail.json().plan, 'collective');
  const user = await app.inject({ method: 'GET', url: '/api/user/runtime', headers: web(owner) });
  t.equal(user.json().instanceId, id, "the running agent is the user's runtime instance");

  const health = await app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/healthz`, headers: backend(owner) });
  t.equal(health.statusCode, 200);
  t.same(health.json(), { ok: true, status: 'live' }, 'the proxy reaches the gateway, prefix stripped');

  await t.test('the runtime proxy carries a WebSocket to the agent', async (t) => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const socket = new WebSocket(`${address.replace('http', 'ws')}/api/runtime/proxy/${id}/`, {
      headers: backend(owner),
    });
    const first = new Promise<string>((resolve, reject) => {
      socket.once('message', (data) => resolve(data.toString()));
      socket.once('error', reject);
    });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send('hello agent');
    t.ok((await first).length > 0, 'a message came back from the gateway');
    socket.close();
  });

  await t.test('another user gets 404 on every route for the agent', async (t) => {
    const wrong = [
      await app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(other) }),
      await app.inject({ method: 'PATCH', url: `/api/agents/${id}`, headers: web(other), payload: { name: 'mine' } }),
      await app.inject({ method: 'GET', url: `/api/agents/${id}/token`, headers: web(other) }),
      await app.inject({ method: 'GET', url: `/api/agents/${id}/stats`, headers: web(other) }),
      await app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: backend(other) }),
      await app.inject({
        method: 'PUT',
        url: `/api/agents/${id}`,
        headers: backend(other),
        payload: { plan: 'network' },
      }),
      await app.inject({ method: 'GET', url: `/api/runtime/instances/${id}/stats`, headers: backend(other) }),
      await app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/healthz`, headers: backend(other) }),
      await app.inject({ method: 'GET', url: `/api/runtime/maintenance?agentId=${id}`, headers: backend(other) }),
      await app.inject({ method: 'POST', url: '/api/deployments', headers: backend(other), payload: { agentId: id } }),
      ...(await Promise.all(
        ['start', 'stop', 'restart', 'update', 'repair', 'reset-memory'].map((action) =>
          app.inject({ method: 'POST', url: `/api/agents/${id}/${action}`, headers: backend(other), payload: {} }),
        ),
      )),
    ];
    for (const res of wrong) t.equal(res.statusCode, 404, `${res.raw.req.method} ${res.raw.req.url}`);
    const list = await app.inject({ method: 'GET', url: '/api/agents', headers: web(other) });
    t.same(list.json(), { agents: [], count: 0, status: 'ok' });
    const deleted = await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: backend(other) });
    t.same(deleted.json(), { id, deleted: true });
    t.equal(await observer.state(id), 'running', "the other user's delete changed nothing");
    t.equal((await h.agentRow(id))?.name, 'Scout');
  });

  const act = (action: string, payload: object = {}) =>
    app.inject({ method: 'POST', url: `/api/agents/${id}/${action}`, headers: backend(owner), payload });
  const ready = async () => h.runtime.waitUntilReady((await h.agentRow(id))!.gateway_url!);
  // With the forwarding headers the edge adds: the gateway (as OpenClaw) refuses a request carrying any.
  const throughTheEdge = {
    ...backend(owner),
    'x-forwarded-for': '203.0.113.7',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'agents.example',
  };
  const readyz = async () =>
    (await app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/readyz`, headers: throughTheEdge })).json() as {
      ready: boolean;
      uptimeMs?: number;
    };

  const stopped = await act('stop');
  t.equal(stopped.statusCode, 200, stopped.body);
  t.match(stopped.json(), { success: true, status: 'stopped', health: 'stopped' });
  t.equal(await observer.state(id), 'stopped', 'stop: the container is stopped');

  const started = await act('start');
  t.match(started.json(), { success: true, status: 'running' });
  t.ok(await ready());
  t.equal(await observer.state(id), 'running', 'start: the container runs again');

  const beforeRestart = (await h.agentRow(id))!.started_at;
  const restarted = await act('restart');
  t.match(restarted.json(), { success: true, status: 'running' });
  t.ok(await h.runtime.waitUntilReady((await h.agentRow(id))!.gateway_url!));
  const afterRestart = await readyz();
  t.equal(afterRestart.ready, true, "/readyz through the runtime proxy, with the edge's forwarding headers");
  const uptime = afterRestart.uptimeMs;
  if (typeof uptime === 'number') t.ok(uptime < 60_000, 'restart: the gateway process is new');
  t.ok(beforeRestart, 'started_at recorded');

  const imageBefore = await observer.image(id);
  const broken = await act('update', { image: images.broken });
  t.equal(broken.statusCode, 500, 'a failing update answers 500');
  t.match(broken.json(), { error: /previous image was restored/ });
  t.equal(await observer.image(id), imageBefore, 'rollback: the previous image runs');
  t.ok(await ready(), 'rollback: the previous gateway answers again');
  t.equal(await observer.state(id), 'running');
  t.equal((await h.agentRow(id))!.image, imageBefore);

  const updated = await act('update', { image: images.good });
  t.equal(updated.statusCode, 200, updated.body);
  t.equal(updated.json().image, images.good);
  t.equal(await observer.image(id), images.good, 'update: the new image runs');
  t.ok(await ready());
  t.equal((await h.driver.list({ agentId: id })).length, 1, 'update: the old container is gone');

  await observer.writeMemory(id);
  t.ok(await observer.memoryExists(id));
  const reset = await act('reset-memory');
  t.equal(reset.statusCode, 200, reset.body);
  t.ok(await ready());
  t.notOk(await observer.memoryExists(id), 'reset-memory: the memory is gone');
  t.equal(await observer.state(id), 'running', 'reset-memory: running again');

  const repaired = await act('repair');
  t.equal(repaired.statusCode, 200, repaired.body);
  t.ok(await ready());
  t.equal(await observer.state(id), 'running');

  await t.test(
    'a configuration saved for the agent reaches its runtime: memory, tokens and running or stopped kept',
    async (t) => {
      const url = `/api/agents/${id}/config`;
      const shown = await app.inject({ method: 'GET', url, headers: web(owner) });
      t.equal(shown.statusCode, 200, shown.body);
      t.match(shown.json(), {
        agentId: id,
        isDefault: true,
        config: { tools: { profile: 'coding' }, session: { dmScope: 'per-channel-peer' } },
      });
      t.equal(
        (await app.inject({ method: 'GET', url, headers: web(other) })).statusCode,
        404,
        'not shown to another user',
      );
      const before = (await h.agentRow(id))!;
      await observer.writeMemory(id);

      const config = { logging: { level: 'debug' }, session: { resetTriggers: ['/fresh-start'] } };
      const saved = await app.inject({ method: 'PUT', url, headers: web(owner), payload: { config } });
      t.equal(saved.statusCode, 200, saved.body);
      t.match(saved.json(), { success: true, agentId: id, config: { ...config, tools: { profile: 'coding' } } });
      t.equal(await h.configApplied(id, saved.json().updatedAt), 'applied');
      const written = JSON.parse(await observer.configText(id));
      t.equal(written.logging.level, 'debug', 'the container has the new configuration');
      t.same(written.session.resetTriggers, ['/fresh-start']);
      t.ok(await ready(), 'the rebuilt gateway answers');
      t.equal(await observer.state(id), 'running');
      t.ok(await observer.memoryExists(id), 'the memory is kept');
      const after = (await h.agentRow(id))!;
      t.not(after.container_id, before.container_id, 'a new container');
      t.equal(after.host_port, before.host_port, 'on the same port');
      t.equal(after.gateway_token_sealed, before.gateway_token_sealed, 'with the same gateway token');
      t.match((await app.inject({ method: 'GET', url, headers: web(owner) })).json(), { isDefault: false, config });

      t.match((await act('stop')).json(), { status: 'stopped' });
      const quieter = await app.inject({
        method: 'PUT',
        url,
        headers: web(owner),
        payload: { config: { ...config, logging: { level: 'warn' } } },
      });
      t.equal(quieter.statusCode, 200, quieter.body);
      t.equal(await h.configApplied(id, quieter.json().updatedAt), 'applied (stopped)');
      t.equal(await observer.state(id), 'stopped', 'a stopped agent stays stopped');
      t.match((await app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: backend(owner) })).json(), {
        status: 'stopped',
      });
      t.equal(JSON.parse(await observer.configText(id)).logging.level, 'warn');
      t.match((await act('start')).json(), { status: 'running' });
      t.ok(await ready());
      t.equal(
        JSON.parse(await observer.configText(id)).logging.level,
        'warn',
        'started with the configuration saved while stopped',
      );
      t.ok(await observer.memoryExists(id), 'the memory is still kept');
    },
  );

  const hostPort = (await h.agentRow(id))!.host_port;
  const deleted = await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: backend(owner) });
  t.same(deleted.json(), { id, deleted: true });
  t.equal(await observer.state(id), 'absent', 'delete: no container left');
  t.notOk(await h.agentRow(id), 'delete: metadata removed (and with it the port)');
  t.equal((await h.driver.list({ agentId: id })).length, 0);
  const again = await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: backend(owner) });
  t.same(again.json(), { id, deleted: true }, 'deleted:true even when absent');
  t.ok(hostPort, 'the port was held until deletion');
}
