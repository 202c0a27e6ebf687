import t from 'tap';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { createQueues, QUEUES } from '@agentyard/queue';
import { build, startWorkers } from './helper.ts';
import { startHooksReceiver } from './support/hooks-receiver.ts';
import { userWithAgent } from './support/agent-rows.ts';
import { heartbeatTimerId } from '../src/domain/timers.ts';

// The batch delivers every task due at a time: other files' tasks would be delivered here too.
await useOwnDatabase(t);

t.setTimeout(120_000);
const env = { QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-heartbeats-${randomBytes(3).toString('hex')}` };
const token = randomBytes(24).toString('base64url');
const receiver = await startHooksReceiver(token);
t.teardown(() => receiver.close());
const app = await build(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
const beats = queues.get(QUEUES.heartbeats);
t.teardown(async () => {
  await beats.obliterate({ force: true });
  await queues.close();
});
const owner = await userWithAgent(receiver.url, token);
const stranger = await userWithAgent(null);
const call = (method: 'GET' | 'POST' | 'DELETE', headers: Record<string, string>, agentId?: string, payload?: object) =>
  app.inject({
    method,
    url: `/api/heartbeat${agentId !== undefined ? `?agentId=${encodeURIComponent(agentId)}` : ''}`,
    headers,
    ...(payload ? { payload } : {}),
  });

t.test('defaults, then a saved setting with nextHeartbeat = now + frequency', async (t) => {
  t.same((await call('GET', owner.headers, owner.agentId)).json(), {
    heartbeat: {
      frequency: '3h',
      enabled: true,
      lastHeartbeat: null,
      nextHeartbeat: null,
      lastStatus: null,
      lastError: null,
    },
  });
  const before = Date.now();
  const res = await call('POST', owner.headers, undefined, { agentId: owner.agentId, frequency: '90m' });
  t.equal(res.statusCode, 200);
  const hb = res.json().heartbeat;
  t.match(hb, { frequency: /^90m$/, enabled: true, lastHeartbeat: null, lastUpdated: String });
  const next = new Date(hb.nextHeartbeat).getTime();
  t.ok(next >= before + 90 * 60_000 && next <= Date.now() + 90 * 60_000);
  t.match(await beats.getJobScheduler(heartbeatTimerId(owner.userId, owner.agentId)), { every: 90 * 60_000 });
  t.has((await call('GET', owner.headers, owner.agentId)).json(), {
    heartbeat: { frequency: '90m', nextHeartbeat: hb.nextHeartbeat },
  });

  const defaults = (await call('POST', owner.headers, undefined, { agentId: owner.agentId })).json().heartbeat;
  t.has(defaults, { frequency: '3h', enabled: true });
  const off = (await call('POST', owner.headers, undefined, { agentId: owner.agentId, enabled: false })).json()
    .heartbeat;
  t.match(off, { enabled: false, nextHeartbeat: null });
  t.notOk(await beats.getJobScheduler(heartbeatTimerId(owner.userId, owner.agentId)), 'disabled: no scheduler');

  t.same((await call('DELETE', owner.headers, owner.agentId)).json(), { success: true });
  t.same((await call('GET', owner.headers, owner.agentId)).json().heartbeat.frequency, '3h');
});

t.test("ownership by agent row or the user's runtime instance id; the interface's errors", async (t) => {
  const res = await call('POST', owner.headers, undefined, { agentId: stranger.agentId });
  t.same([res.statusCode, res.json()], [404, { error: 'Agent not found' }]);
  await systemDb()
    .updateTable('users')
    .set({ runtime_instance_id: 'inst-abc123' })
    .where('id', '=', owner.userId)
    .execute();
  t.equal((await call('POST', owner.headers, undefined, { agentId: 'inst-abc123', frequency: '1d' })).statusCode, 200);
  t.equal((await call('POST', stranger.headers, undefined, { agentId: 'inst-abc123' })).statusCode, 404);
  t.same((await call('GET', owner.headers)).json(), { error: 'agentId required' });
  t.same((await call('POST', owner.headers, undefined, {})).json(), { error: 'agentId required' });
  t.same((await call('DELETE', owner.headers)).json(), { error: 'agentId required' });
  for (const frequency of ['3', 'h', '0h', '2w', '1.5h', '-1m']) {
    const bad = await call('POST', owner.headers, undefined, { agentId: owner.agentId, frequency });
    t.equal(bad.statusCode, 400, frequency);
    t.match(bad.json().error, /frequency/);
  }
  await call('DELETE', owner.headers, 'inst-abc123');
});

t.test('an enabled heartbeat wakes the agent through /hooks/wake and moves last/next on', async (t) => {
  const workers = await startWorkers(t, env);
  await call('POST', owner.headers, undefined, { agentId: owner.agentId, frequency: '1m' });
  // Bring the first beat forward so the test need not wait a minute: same scheduler, first firing now.
  const soon = new Date(Date.now() + 200);
  await systemDb()
    .updateTable('heartbeats')
    .set({ next_heartbeat: soon })
    .where('user_id', '=', owner.userId)
    .execute();
  await beats.removeJobScheduler(heartbeatTimerId(owner.userId, owner.agentId));
  await beats.upsertJobScheduler(
    heartbeatTimerId(owner.userId, owner.agentId),
    { every: 60_000, startDate: soon },
    { name: 'heartbeat', data: { userId: owner.userId, agentRef: owner.agentId } },
  );
  const wake = await receiver.next((c) => c.path === '/hooks/wake');
  t.equal(wake.authorization, `Bearer ${token}`);
  t.has(wake.body, { text: 'Heartbeat', mode: 'now' });
  await once(workers.heartbeats, 'completed');
  const hb = (await call('GET', owner.headers, owner.agentId)).json().heartbeat;
  t.ok(hb.lastHeartbeat, 'lastHeartbeat set');
  t.ok(
    new Date(hb.nextHeartbeat).getTime() - new Date(hb.lastHeartbeat).getTime() > 55_000,
    'next one a frequency later',
  );
  await call('DELETE', owner.headers, owner.agentId);
  t.notOk(await beats.getJobScheduler(heartbeatTimerId(owner.userId, owner.agentId)));
});
