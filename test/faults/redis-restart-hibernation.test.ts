import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueEvents } from 'bullmq';
import { repoRoot } from '@agentyard/config';
import { ClosableRedis, QUEUES, QueueUnavailableError, WAKE_AGENT_JOB, wakeJobId } from '@agentyard/queue';
import { startPrivateRedis, systemDb, useOwnDatabase } from '@agentyard/testing';
import { HIBERNATE_SWEEP_JOB } from '../../services/agents/src/domain/runtime/privileged/hibernation.ts';
import { backend, startAgents, web } from '../../services/agents/test/agents-harness.ts';

// Issue 30, a fault never tried: Redis restarts under the hibernation sweep. The agents service and
// its workers run on a Redis of this file's own (the machine's serves every other test file), the
// sweep every 200 ms, agents paused after 8 s idle. Redis restarts three ways while an agent is busy
// or asleep: with its append-only file (everything kept), without its data (all lost: the sweep's
// job scheduler, every agent's activity), and away for a while with a wake asked meanwhile. Then:
// the sweep runs again after each return (the time from the return to the first real pass is
// printed); an agent busy until the restart is not paused for an activity record Redis lost; a wake
// asked while Redis is away fails clearly (503, nothing changed) and succeeds once it is back; no
// agent is left in a transient status. Its own database: the sweep pauses whatever idles in the
// agents table it reads.
await useOwnDatabase(t);
t.setTimeout(600_000);

const PAUSE_AFTER_MS = 8000;
const engine = process.env.RUNTIME_DRIVER === 'docker';

t.test(
  'Redis restarts under the hibernation sweep: sweeps come back, busy agents stay awake, wakes wait for Redis',
  async (t) => {
    const redis = await startPrivateRedis();
    t.teardown(() => redis.stop());
    const dataDir = await mkdtemp(join(tmpdir(), 'agentyard-redis-restart-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const h = await startAgents(t, {
      ...(engine
        ? { AGENT_IMAGE: 'localhost/agentyard-gateway-minimal:1' }
        : {
            RUNTIME_DRIVER: 'process',
            RUNTIME_DATA_DIR: dataDir,
            AGENT_IMAGE: join(repoRoot, 'infra/agent-image/minimal-gateway/server.mjs'),
          }),
      REDIS_URL: redis.url,
      AGENT_PORT_RANGE: '30400-30499',
      AGENT_READY_TIMEOUT_MS: '30000',
      HIBERNATE_PAUSE_AFTER: `${PAUSE_AFTER_MS}ms`,
      HIBERNATE_STOP_AFTER: 'off',
      HIBERNATE_SWEEP_EVERY_MS: '200',
      HIBERNATE_ACTIVITY_EVERY_MS: '100',
    });
    // Whatever happens below, the harness's teardown (before this one's Redis stops) finds Redis up.
    t.teardown(async () => {
      if (!redisUp) await redis.comeBack();
    });
    let redisUp = true;

    // Every pass of the sweep as the lifecycle queue's events report it: when it ended (its event's stream id is its time) and what it did.
    const sweeps: { at: number; outcome: string }[] = [];
    const sweepWaiters = new Set<() => void>();
    const connection = new ClosableRedis(redis.url, { maxRetriesPerRequest: null });
    const events = new QueueEvents(QUEUES.lifecycle, { connection, prefix: h.config.QUEUE_PREFIX });
    events.on('error', () => {});
    events.on('completed', ({ jobId, returnvalue }, id) => {
      if (!jobId.startsWith(`repeat:${HIBERNATE_SWEEP_JOB}:`)) return;
      sweeps.push({ at: Number(id.split('-')[0]), outcome: String(returnvalue) });
      for (const wake of sweepWaiters) wake();
    });
    await events.waitUntilReady();
    // Given a connection, QueueEvents leaves it open when it closes.
    t.teardown(() => events.close().finally(() => connection.disconnect()));
    /** The first pass that ended after `after` (ms) and swept (not one that found another under way) and satisfies `which`; rejects at the deadline. */
    const sweepAfter = async (after: number, which: (outcome: string) => boolean = () => true, deadlineMs = 60_000) => {
      const deadline = Date.now() + deadlineMs;
      for (;;) {
        const found = sweeps.find((s) => s.at > after && s.outcome !== 'a sweep is under way' && which(s.outcome));
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `no sweep within ${deadlineMs} ms after ${new Date(after).toISOString()} (last: ${JSON.stringify(sweeps.at(-1))})`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          sweepWaiters.add(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        sweepWaiters.clear();
      }
    };

    const user = await h.subscribedUser('label');
    const provisioned = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'Insomniac' },
    });
    t.equal(provisioned.statusCode, 201, provisioned.body);
    const id = provisioned.json().agent.id as string;
    t.match(await h.provisioned(id), /^running/);
    const proxied = () =>
      h.app.inject({ method: 'GET', url: `/api/runtime/proxy/${id}/healthz`, headers: backend(user) });

    /** Requests reach the agent every 200 ms (a person at work) until `stop`, which answers when the last answered one began. */
    const keepBusy = () => {
      let busy = true;
      let lastAnswered = 0;
      const work = (async () => {
        while (busy) {
          const began = Date.now();
          if ((await proxied()).statusCode === 200) lastAnswered = began;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      return {
        async stop() {
          busy = false;
          await work;
          return lastAnswered;
        },
      };
    };
    const figures: string[] = [];

    await t.test('restarted with its append-only file: the sweep goes on, the busy agent stays awake', async (t) => {
      const work = keepBusy();
      await sweepAfter(Date.now());
      await redis.restart();
      const back = Date.now();
      const first = await sweepAfter(back);
      figures.push(`append-only file kept: Redis back → a sweep pass ${first.at - back} ms`);
      t.pass(`a sweep ran ${first.at - back} ms after Redis came back`);
      await work.stop();
      t.equal((await h.agentRow(id))?.status, 'running', 'the busy agent runs on');
    });

    await t.test(
      'restarted without its data: the sweep is scheduled again, and an agent busy until then is not paused for the record Redis lost',
      async (t) => {
        // Its row last changed an hour ago: only its activity in Redis says it is busy.
        await systemDb()
          .updateTable('agents')
          .set({ updated_at: new Date(Date.now() - 3_600_000) })
          .where('id', '=', id)
          .execute();
        const work = keepBusy();
        // Busy past the pause time, and the sweeps leave it awake.
        await sweepAfter(Date.now() + PAUSE_AFTER_MS);
        t.equal((await h.agentRow(id))?.status, 'running', 'busy longer than the pause time, it runs');
        const lastActive = await work.stop();
        await redis.restart({ losingData: true });
        const back = Date.now();
        const first = await sweepAfter(back);
        figures.push(`data lost: Redis back → a sweep pass ${first.at - back} ms (${first.outcome})`);
        t.pass(`a sweep ran ${first.at - back} ms after Redis came back empty`);
        t.equal(
          (await h.agentRow(id))?.status,
          'running',
          'the first sweep after the loss leaves the agent that was busy until the restart awake',
        );
        const paused = await sweepAfter(back, (outcome) => /paused 1/.test(outcome), PAUSE_AFTER_MS + 30_000);
        t.ok(
          paused.at >= lastActive + PAUSE_AFTER_MS,
          `paused no sooner than the pause time after its last request (${paused.at - lastActive} ms after it)`,
        );
        figures.push(
          `data lost: the agent busy until the restart paused ${paused.at - lastActive} ms after its last request (pause time ${PAUSE_AFTER_MS} ms)`,
        );
        t.has(
          await h.agentRow(id),
          { status: 'suspended', hibernation: 'paused' },
          'and hibernation goes on: idle since, it is paused',
        );
      },
    );

    await t.test(
      'a wake asked while Redis is away fails clearly and changes nothing; once Redis is back it wakes the agent',
      async (t) => {
        const asleep = (await h.agentRow(id))!;
        t.has(asleep, { status: 'suspended', hibernation: 'paused' });
        await redis.goAway();
        redisUp = false;
        const began = performance.now();
        const refused = await proxied();
        const refusedMs = Math.round(performance.now() - began);
        t.equal(refused.statusCode, 503, `a request to the paused agent is refused (in ${refusedMs} ms)`);
        t.match(
          refused.json(),
          { error: 'Agent operations are temporarily unavailable' },
          'saying why, in the words the owner reads',
        );
        figures.push(`Redis away: a request to a paused agent answered 503 in ${refusedMs} ms`);
        const job = h.queues.add(
          QUEUES.lifecycle,
          WAKE_AGENT_JOB,
          { agentId: id },
          { jobId: wakeJobId(id, new Date(asleep.suspended_at!).getTime()) },
        );
        await t.rejects(job, QueueUnavailableError, "the scheduler's wake job is refused too (its caller retries)");
        t.has(
          await h.agentRow(id),
          { status: 'suspended', hibernation: 'paused' },
          'the agent sleeps on, its row as it was',
        );
        if (engine) t.equal((await h.driver.inspect(asleep.container_id!))?.state, 'paused', 'and its container too');

        await redis.comeBack({ losingData: true });
        redisUp = true;
        const back = performance.now();
        // As a client told "try again shortly" does: each answer until the agent's is that 503, never another.
        const answers: number[] = [];
        for (;;) {
          const res = await proxied();
          answers.push(res.statusCode);
          if (res.statusCode !== 503 || performance.now() - back > 60_000) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const wokenMs = Math.round(performance.now() - back);
        t.equal(
          answers.at(-1),
          200,
          `answered by the woken agent ${wokenMs} ms after Redis came back (${answers.length - 1} refused before)`,
        );
        t.same(
          answers.filter((code) => code !== 503 && code !== 200),
          [],
          'nothing but 503 before',
        );
        figures.push(
          `Redis back (empty) → a request to the paused agent answered by it: ${wokenMs} ms, ${answers.length - 1} refused first`,
        );
        t.has(
          await h.agentRow(id),
          { status: 'running', hibernation: null, suspended_at: null },
          'its row says it runs',
        );
      },
    );

    const rows = await systemDb()
      .selectFrom('agents')
      .select(['id', 'status', 'hibernation', 'container_id'])
      .execute();
    t.same(
      rows.filter((r) => !['running', 'suspended'].includes(r.status)),
      [],
      'no agent left in a transient status',
    );
    for (const row of rows.filter((r) => r.container_id)) {
      const state = (await h.driver.inspect(row.container_id!))?.state;
      t.equal(
        state,
        row.status === 'running' ? 'running' : row.hibernation === 'paused' ? 'paused' : 'stopped',
        `the engine agrees with the row (${row.status}/${row.hibernation})`,
      );
    }
    for (const line of figures) t.comment(line);
  },
);
