import t from 'tap';
import { randomBytes } from 'node:crypto';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { createQueues, QUEUES, type Job } from '@agentyard/queue';
import { PROMPT_BATCH_JOB, RUN_NOW_JOB, RUN_PURGE_JOB, TURN_OUTCOME_JOB } from '../src/domain/timers.ts';
import { OVERLAP_QUEUE_FULL, OVERLAP_SKIPPED } from '../src/domain/prompt-firings.ts';
import { build, startWorkers } from './helper.ts';
import { startGatewayStandIn } from './support/gateway-stand-in.ts';
import { userWithAgent } from './support/agent-rows.ts';

// The batch delivers every task due at a time, and the purge reads every user's runs: a database of our own.
await useOwnDatabase(t);

// A delivered run is followed to its end: answered with the agent's reply, its tokens and cost, or
// failed with the agent's error or for a turn that never ends; a firing due while the previous turn
// goes on meets the task's overlapPolicy; old runs are purged by plan. The real scheduler app and
// worker, BullMQ in Redis, and a real HTTP server standing in for the agent's gateway (hooks and
// tools) and for the AI gateway's usage rows.
t.setTimeout(180_000);
const TURN_TIMEOUT_MS = 8000;
const env = {
  QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-outcomes-${randomBytes(3).toString('hex')}`,
  SCHEDULER_DELIVERY_ATTEMPTS: '1',
  SCHEDULER_MIN_INTERVAL_SECONDS: '*:1',
  SCHEDULER_OUTCOME_POLL_MS: '200',
  SCHEDULER_TURN_TIMEOUT_MS: String(TURN_TIMEOUT_MS),
  SCHEDULER_RUN_RETENTION_DAYS: 'free:7,*:30',
};
const tokens = { hooks: randomBytes(24).toString('base64url'), gateway: randomBytes(24).toString('base64url') };
const agent = await startGatewayStandIn(tokens);
t.teardown(() => agent.close());
const app = await build(t, env);
const workers = await startWorkers(t, env);
const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: env.QUEUE_PREFIX });
t.teardown(async () => {
  await queues.get(QUEUES.scheduledPrompts).obliterate({ force: true });
  await queues.close();
});
const owner = await userWithAgent(agent.url, tokens.hooks, tokens.gateway);

interface Run {
  id: string;
  dueAt: string;
  status: string;
  manual: boolean;
  reply: string | null;
  tokens: number | null;
  costUsd: number | null;
  error: string | null;
  finishedAt: string | null;
}

/** The next job of `name` the worker finishes whose data matches. */
const jobDone = (name: string, match: (data: Record<string, unknown>) => boolean = () => true) =>
  new Promise<Job>((resolve) => {
    const onDone = (job: Job) => {
      if (job.name !== name || !match(job.data)) return;
      workers.prompts.off('completed', onDone);
      resolve(job);
    };
    workers.prompts.on('completed', onDone);
  });
const inject = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: owner.headers, payload });
const runsOf = async (taskId: string): Promise<Run[]> =>
  (await inject('GET', `/api/scheduled-tasks/${taskId}/runs`)).json().runs;
const create = async (body: object) => {
  const res = await inject('POST', '/api/scheduled-tasks', { agentId: owner.agentId, prompt: 'What is new?', ...body });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json() as { id: string };
};
const listed = async (taskId: string) =>
  (await inject('GET', '/api/scheduled-tasks')).json().tasks.find((x: { id: string }) => x.id === taskId);
/** Firings of `cron` one after another until the task's runs are as awaited. */
async function afterFirings(cron: string, taskId: string, done: (runs: Run[]) => boolean): Promise<Run[]> {
  for (;;) {
    await jobDone(PROMPT_BATCH_JOB, (data) => data.cronSchedule === cron);
    const runs = await runsOf(taskId);
    if (done(runs)) return runs;
  }
}

t.test("an answered run keeps the agent's reply (its first 4000 characters), tokens and cost", async (t) => {
  const task = await create({ name: 'digest', cronSchedule: '0 0 1 1 *' });
  const session = `scheduled:${task.id}`;
  const turn = agent.turn(session);
  const settled = jobDone(TURN_OUTCOME_JOB, (data) => data.taskId === task.id);
  t.equal((await inject('POST', `/api/scheduled-tasks/${task.id}/run`)).statusCode, 202);
  await turn;
  const reply = `Three things are new. ${'x'.repeat(4500)}`;
  await agent.answer(session, owner, reply, { tokens: 1234, costUsd: '0.0042' });
  await settled;
  const [run] = await runsOf(task.id);
  t.match(run, {
    status: /^answered$/,
    manual: true,
    reply: reply.slice(0, 4000),
    tokens: 1234,
    costUsd: 0.0042,
    error: null,
    finishedAt: String,
  });
  t.equal(run!.reply!.length, 4000);
  t.has(await listed(task.id), { lastStatus: 'answered', consecutiveFailures: 0 });
});

t.test("a turn that ends in an error is a failed run with the agent's error, counted as a failure", async (t) => {
  const task = await create({ name: 'broken', cronSchedule: '0 0 1 1 *' });
  const session = `scheduled:${task.id}`;
  const turn = agent.turn(session);
  const settled = jobDone(TURN_OUTCOME_JOB, (data) => data.taskId === task.id);
  await inject('POST', `/api/scheduled-tasks/${task.id}/run`);
  await turn;
  agent.fail(session, 'provider answered 429: rate limited');
  await settled;
  t.match(await runsOf(task.id), [
    { status: /^failed$/, reply: null, error: 'provider answered 429: rate limited', finishedAt: String },
  ]);
  t.match(await listed(task.id), {
    lastStatus: /^failed$/,
    consecutiveFailures: 1,
    lastError: 'provider answered 429: rate limited',
  });
});

t.test(
  'a gateway whose tools fail for a while (5xx) is asked again: the run is answered once they read; tools that refuse (4xx) leave it delivered, saying why',
  async (t) => {
    const task = await create({ name: 'flaky tools', cronSchedule: '0 0 1 1 *' });
    const session = `scheduled:${task.id}`;
    const turn = agent.turn(session);
    const failed = agent.failTools(500, 500);
    const settled = jobDone(TURN_OUTCOME_JOB, (data) => data.taskId === task.id);
    await inject('POST', `/api/scheduled-tasks/${task.id}/run`);
    await turn;
    await failed;
    t.has(await runsOf(task.id), [{ status: 'delivered', finishedAt: null }], 'still followed after two failed reads');
    await agent.answer(session, owner, 'Read at last.');
    await settled;
    t.match(await runsOf(task.id), [{ status: /^answered$/, reply: 'Read at last.', error: null }]);

    const refusing = await create({ name: 'tools off', cronSchedule: '0 0 1 1 *' });
    const refused = agent.failTools(404);
    const unknown = jobDone(TURN_OUTCOME_JOB, (data) => data.taskId === refusing.id);
    await inject('POST', `/api/scheduled-tasks/${refusing.id}/run`);
    await refused;
    await unknown;
    t.match(await runsOf(refusing.id), [
      {
        status: /^delivered$/,
        finishedAt: String,
        error: 'its answer could not be read from the agent: gateway sessions_list answered 404',
      },
    ]);
  },
);

t.test('a turn that never ends is failed once the turn timeout has passed', async (t) => {
  const task = await create({ name: 'stuck', cronSchedule: '0 0 1 1 *' });
  const settled = jobDone(TURN_OUTCOME_JOB, (data) => data.taskId === task.id);
  await inject('POST', `/api/scheduled-tasks/${task.id}/run`);
  await settled;
  t.match(await runsOf(task.id), [
    {
      status: /^failed$/,
      error: `the agent's turn did not end within ${TURN_TIMEOUT_MS / 1000} s`,
      finishedAt: String,
    },
  ]);
});

t.test(
  'overlap policy skip: a firing due while the turn goes on is skipped-overlap; after the answer, firings are delivered again',
  async (t) => {
    const cron = '*/1 * * * * *';
    const task = await create({ name: 'ticker', cronSchedule: cron, overlapPolicy: 'skip' });
    const session = `scheduled:${task.id}`;
    const skipped = await afterFirings(cron, task.id, (runs) => runs.some((r) => r.status === 'skipped-overlap'));
    t.equal(skipped.filter((r) => r.status === 'delivered').length, 1, 'one turn in progress');
    t.match(
      skipped.find((r) => r.status === 'skipped-overlap'),
      { error: OVERLAP_SKIPPED, finishedAt: String },
    );
    const nextTurn = agent.turn(session);
    await agent.answer(session, owner, 'Tick answered');
    await nextTurn;
    await inject('PUT', '/api/scheduled-tasks', { taskId: task.id, enabled: false });
    const runs = await runsOf(task.id);
    t.ok(
      runs.some((r) => r.status === 'answered' && r.reply === 'Tick answered'),
      'the first turn answered',
    );
    t.equal(
      agent.hookCalls.filter((c) => c.sessionKey === session).length,
      2,
      'the agent got the prompt twice: before and after its turn, never during',
    );
  },
);

t.test(
  'overlap policy queue: one firing waits for the turn and is delivered after it; a further one is skipped',
  async (t) => {
    const cron = '* * * * * *';
    const task = await create({ name: 'queued', cronSchedule: cron, overlapPolicy: 'queue' });
    const session = `scheduled:${task.id}`;
    const waiting = await afterFirings(
      cron,
      task.id,
      (runs) => runs.some((r) => r.status === 'pending') && runs.some((r) => r.status === 'skipped-overlap'),
    );
    const queued = waiting.find((r) => r.status === 'pending')!;
    t.match(queued, { manual: false, finishedAt: null });
    t.match(
      waiting.find((r) => r.status === 'skipped-overlap'),
      { error: OVERLAP_QUEUE_FULL },
    );
    const released = jobDone(RUN_NOW_JOB);
    const nextTurn = agent.turn(session);
    await agent.answer(session, owner, 'First answered');
    await nextTurn;
    await released;
    await inject('PUT', '/api/scheduled-tasks', { taskId: task.id, enabled: false });
    const runs = await runsOf(task.id);
    t.has(
      runs.find((r) => r.id === queued.id),
      { status: 'delivered', dueAt: queued.dueAt },
      'the waiting run went after the turn, for its own due time',
    );
  },
);

t.test('the daily purge deletes runs older than their owner plan keeps them', async (t) => {
  const paying = await userWithAgent(null);
  await systemDb()
    .insertInto('subscriptions')
    .values({
      user_id: paying.userId,
      id: `sub_${randomBytes(6).toString('hex')}`,
      plan: 'collective',
      status: 'active',
      updated_at: new Date(),
    })
    .execute();
  const taskOf = (user: { userId: string; agentId: string }) =>
    systemDb()
      .insertInto('scheduled_tasks')
      .values({
        user_id: user.userId,
        agent_id: user.agentId,
        name: 'history',
        cron_schedule: '0 0 1 1 *',
        prompt: 'p',
        enabled: false,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const [freeTask, payingTask] = [await taskOf(owner), await taskOf(paying)];
  const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
  const run = (task: { id: string }, user: { userId: string }, days: number) => ({
    task_id: task.id,
    user_id: user.userId,
    due_at: daysAgo(days),
    status: 'missed' as const,
    error: `${days} days`,
  });
  await systemDb()
    .insertInto('scheduled_task_runs')
    .values([run(freeTask, owner, 8), run(freeTask, owner, 3), run(payingTask, paying, 8), run(payingTask, paying, 31)])
    .execute();
  t.ok(
    await queues.get(QUEUES.scheduledPrompts).getJobScheduler(RUN_PURGE_JOB),
    'the purge is a job scheduler of the worker',
  );
  const purged = jobDone(RUN_PURGE_JOB);
  await queues.get(QUEUES.scheduledPrompts).add(RUN_PURGE_JOB, {});
  t.same((await purged).returnvalue, { deleted: 2 });
  const left = async (task: { id: string }) =>
    (await systemDb().selectFrom('scheduled_task_runs').select('error').where('task_id', '=', task.id).execute()).map(
      (r) => r.error,
    );
  t.same(await left(freeTask), ['3 days'], 'without a plan: 7 days');
  t.same(await left(payingTask), ['8 days'], 'on collective: 30 days');
});
