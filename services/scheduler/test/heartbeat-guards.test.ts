import t from 'tap';
import { randomBytes } from 'node:crypto';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { createQueues, QUEUES, type Job, type Worker } from '@agentyard/queue';
import { HEARTBEAT_JOB } from '../src/domain/timers.ts';
import { SPEND_LIMIT_MESSAGE } from '../src/domain/privileged/heartbeat-guards.ts';
import { build, startWorkers } from './helper.ts';
import { startGatewayStandIn } from './support/gateway-stand-in.ts';
import { userWithAgent } from './support/agent-rows.ts';

// The purge and the heartbeats of other files must not meet ours: a database of our own.
await useOwnDatabase(t);

// Heartbeats get run rows like scheduled prompts, and two guards: no heartbeat into an agent nobody
// has talked with for HEARTBEAT_IDLE_DAYS (it pauses itself, saying why), none while the owner's
// monthly spend limit is reached. The real scheduler app and worker, BullMQ in Redis, a real HTTP
// server standing in for the agent's gateway (hooks and the sessions tool).
t.setTimeout(120_000);
const env = {
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-beat-guards-${randomBytes(3).toString('hex')}`,
  HEARTBEAT_IDLE_DAYS: '7',
};
const tokens = { hooks: randomBytes(24).toString('base64url'), gateway: randomBytes(24).toString('base64url') };
const agent = await startGatewayStandIn(tokens);
t.teardown(() => agent.close());
const app = await build(t, env);
const workers = await startWorkers(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
const beats = queues.get(QUEUES.heartbeats);
t.teardown(async () => {
  await beats.obliterate({ force: true });
  await queues.close();
});
const owner = await userWithAgent(agent.url, tokens.hooks, tokens.gateway);
const stranger = await userWithAgent(null);
const days = (n: number) => new Date(Date.now() - n * 86_400_000);

/** Fires the owner's heartbeat now and resolves once the worker has handled it. */
async function fire(): Promise<unknown> {
  const done = new Promise<Job>((resolve) => {
    const onDone = (job: Job) => {
      if (job.name !== HEARTBEAT_JOB || job.data.userId !== owner.userId) return;
      (workers.heartbeats as Worker).off('completed', onDone);
      resolve(job);
    };
    (workers.heartbeats as Worker).on('completed', onDone);
  });
  await beats.add(HEARTBEAT_JOB, { userId: owner.userId, agentRef: owner.agentId });
  return (await done).returnvalue;
}
const get = async (url: string, headers = owner.headers) => app.inject({ method: 'GET', url, headers });
const heartbeat = async () => (await get(`/api/heartbeat?agentId=${owner.agentId}`)).json().heartbeat;
const runs = async () => (await get(`/api/heartbeat/runs?agentId=${owner.agentId}`)).json().runs;
const enable = () =>
  app.inject({
    method: 'POST',
    url: '/api/heartbeat',
    headers: owner.headers,
    payload: { agentId: owner.agentId, frequency: '1d', enabled: true },
  });

t.test('a heartbeat into an agent someone talks with is delivered and recorded as a run', async (t) => {
  t.equal((await enable()).statusCode, 200);
  agent.session('agent:main:agentyard:web:someone', days(1));
  t.equal(await fire(), 'delivered');
  t.same(agent.wakes, ['Heartbeat']);
  t.match(await runs(), [{ status: /^delivered$/, error: null, startedAt: String, finishedAt: String }]);
  t.match(await heartbeat(), { enabled: true, lastStatus: /^delivered$/, lastError: null, lastHeartbeat: String });
});

t.test(
  'no conversation for more than HEARTBEAT_IDLE_DAYS: the heartbeat pauses itself and says why; enabled again, it goes',
  async (t) => {
    await systemDb()
      .updateTable('agents')
      .set({ created_at: days(30) })
      .where('id', '=', owner.agentId)
      .execute();
    agent.session('agent:main:agentyard:web:someone', days(10));
    // Heartbeats and scheduled prompts keep their own sessions busy: they are no conversation.
    agent.session('agent:main:main', new Date());
    agent.session('agent:main:scheduled:0b7f', new Date());
    const wakes = agent.wakes.length;
    t.equal(await fire(), 'paused-idle');
    t.equal(agent.wakes.length, wakes, 'the agent was not woken');
    const paused = await heartbeat();
    t.match(paused, {
      enabled: false,
      nextHeartbeat: null,
      lastStatus: /^skipped-idle$/,
      lastError: /^Paused: nobody has talked with the agent for more than 7 days/,
    });
    t.has((await runs())[0], { status: 'skipped-idle', error: paused.lastError });

    agent.session('agent:main:telegram:direct:42', days(2));
    t.equal((await enable()).statusCode, 200);
    t.match(await heartbeat(), { enabled: true, lastError: null });
    t.equal(await fire(), 'delivered');
    t.equal(agent.wakes.length, wakes + 1, 'a conversation on a channel counts');
  },
);

t.test("the owner's spend limit reached: heartbeats are skipped with the notice, and go again under it", async (t) => {
  const month = new Date().toISOString().slice(0, 8);
  await systemDb()
    .insertInto('spending_limits')
    .values({ user_id: owner.userId, monthly_usd: '1.00', updated_at: new Date() })
    .execute();
  await systemDb()
    .insertInto('usage_daily')
    .values({
      day: `${month}01`,
      user_ref: owner.userId,
      user_id: owner.userId,
      agent_id: owner.agentId,
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      calls: 3,
      unpriced_calls: 0,
      input_tokens: 10,
      output_tokens: 10,
      total_tokens: 20,
      cost_usd: '1.20',
      turns: 3,
    })
    .execute();
  const wakes = agent.wakes.length;
  t.equal(await fire(), 'skipped-paused');
  t.equal(agent.wakes.length, wakes, 'the agent was not woken');
  t.match(await heartbeat(), { enabled: true, lastStatus: /^skipped-spend-limit$/, lastError: SPEND_LIMIT_MESSAGE });
  t.match((await runs())[0], { status: /^skipped-spend-limit$/, error: SPEND_LIMIT_MESSAGE });

  await systemDb()
    .updateTable('spending_limits')
    .set({ monthly_usd: '5.00' })
    .where('user_id', '=', owner.userId)
    .execute();
  t.equal(await fire(), 'delivered');
  t.has(await heartbeat(), { lastStatus: 'delivered', lastError: null });
});

t.test("heartbeat runs are the owner's: another user's agent is 404; a bad cursor is 400", async (t) => {
  const res = await get(`/api/heartbeat/runs?agentId=${owner.agentId}`, stranger.headers);
  t.same([res.statusCode, res.json()], [404, { error: 'Agent not found' }]);
  const page = (await get(`/api/heartbeat/runs?agentId=${owner.agentId}&limit=1`)).json();
  t.equal(page.runs.length, 1);
  const next = (await get(`/api/heartbeat/runs?agentId=${owner.agentId}&limit=1&cursor=${page.nextCursor}`)).json();
  t.not(next.runs[0].id, page.runs[0].id, 'the next page goes on');
  t.equal((await get(`/api/heartbeat/runs?agentId=${owner.agentId}&cursor=bm90LW91cnM`)).statusCode, 400);
});
