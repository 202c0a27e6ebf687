import type { Test } from 'tap';
import WebSocket from 'ws';
import { backend, web, type startAgents } from './agents-harness.ts';

/** How a test looks at an agent's runtime from outside the platform (the engine, /proc, the port). */
export interface RuntimeObserver {
  state(agentId: string): Promise<'running' | 'stopped' | 'absent'>;
  image(agentId: string): Promise<string | null>;
  writeMemory(agentId: string): Promise<void>;
  memoryExists(agentId: string): Promise<boolean>;
}

type Harness = Awaited<ReturnType<typeof startAgents>>;

/**
 * The whole lifecycle of spec §4.5 on one driver: provision → running, the runtime proxy over HTTP
 * and WebSocket, isolation between users, stop/start/restart, update with rollback, reset memory,
 * delete; each step checked on the runtime itself through `observer`.
 */
export async function lifecycleScenario(t: Test, h: Harness, observer: RuntimeObserver, images: { good: string; broken: string }) {
  const { app } = h;
  const owner = await h.subscribedUser('label');
  const other = await h.subscribedUser('label');

  const provision = await app.inject({ method: 'POST', url: '/api/agents/provision', headers: web(owner), payload: { name: '  Scout  ', tier: 'pro' } });
  t.equal(provision.statusCode, 201, provision.body);
  const { agent } = provision.json();
  t.equal(agent.status, 'provisioning', 'created at once as provisioning');
  t.equal(agent.name, 'Scout');
  t.equal(agent.model, 'claude-opus-4-6');
  const id: string = agent.id;

  t.match(await h.provisioned(id), /^running/);
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
  t.equal(user.json().instanceId, id, 'the running agent is the user\'s runtime instance');

  const health = await app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/healthz`, headers: backend(owner) });
  t.equal(health.statusCode, 200);
  t.same(health.json(), { ok: true, status: 'live' }, 'the proxy reaches the gateway, prefix stripped');

  await t.test('the runtime proxy carries a WebSocket to the agent', async (t) => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const socket = new WebSocket(`${address.replace('http', 'ws')}/api/runtime/proxy/${id}/`, { headers: backend(owner) });
    const first = new Promise<string>((resolve, reject) => { socket.once('message', (data) => resolve(data.toString())); socket.once('error', reject); });
    await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
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
      await app.inject({ method: 'PUT', url: `/api/agents/${id}`, headers: backend(other), payload: { plan: 'network' } }),
      await app.inject({ method: 'GET', url: `/api/runtime/instances/${id}/stats`, headers: backend(other) }),
      await app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/healthz`, headers: backend(other) }),
      await app.inject({ method: 'GET', url: `/api/runtime/maintenance?agentId=${id}`, headers: backend(other) }),
      await app.inject({ method: 'POST', url: '/api/deployments', headers: backend(other), payload: { agentId: id } }),
      ...await Promise.all(['start', 'stop', 'restart', 'update', 'repair', 'reset-memory'].map((action) =>
        app.inject({ method: 'POST', url: `/api/agents/${id}/${action}`, headers: backend(other), payload: {} }))),
    ];
    for (const res of wrong) t.equal(res.statusCode, 404, `${res.raw.req.method} ${res.raw.req.url}`);
    const list = await app.inject({ method: 'GET', url: '/api/agents', headers: web(other) });
    t.same(list.json(), { agents: [], count: 0, status: 'ok' });
    const deleted = await app.inject({ method: 'DELETE', url: `/api/agents/${id}`, headers: backend(other) });
    t.same(deleted.json(), { id, deleted: true });
    t.equal(await observer.state(id), 'running', 'the other user\'s delete changed nothing');
    t.equal((await h.agentRow(id))?.name, 'Scout');
  });

  const act = (action: string, payload: object = {}) => app.inject({ method: 'POST', url: `/api/agents/${id}/${action}`, headers: backend(owner), payload });
  const ready = async () => h.runtime.waitUntilReady((await h.agentRow(id))!.gateway_url!);
  const readyz = async () => (await app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/readyz`, headers: backend(owner) })).json() as { ready: boolean; uptimeMs?: number };

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
  const uptime = (await readyz()).uptimeMs;
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
