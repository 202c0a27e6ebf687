import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { QueueEvents } from 'bullmq';
import { AGENT_CRASH_LOOP_MAIL_JOB, QUEUES } from '@agentyard/queue';
import { systemDb } from '@agentyard/testing';
import { parseKeyring } from '@agentyard/crypto';
import { startWorkers } from '../../src/app.ts';
import { agentWatchdog } from '../../src/domain/telemetry/privileged/agent-watchdog.ts';
import { createRuntimeContext } from '../../src/domain/runtime/privileged/runtime-context.ts';
import { agentStatusEvents, type AgentStatusEvent } from '../../src/domain/telemetry/status-events.ts';
import { startAgents, web } from '../agents-harness.ts';

// The watchdog on the real engine (Podman's Docker API here) with the minimal gateway image: an
// agent's process killed with SIGKILL is noticed from the engine's events, recorded for its owner
// and started again; three exits in five minutes stop the restarts and queue the owner's mail; an
// exit while no worker runs is found when one starts. Every wait is on an event: a status change
// (the database's notice), a queue job's outcome, or the gateway answering.
const MINIMAL = 'localhost/agentyard-gateway-minimal:1';

t.setTimeout(600_000);

/** Status changes of one user's agents, in order, from the moment of the call. */
async function statusesOf(t: Test, databaseUrl: string, userId: string) {
  const events = agentStatusEvents(databaseUrl, { warn() {} }, { applicationName: 'watchdog-test' });
  const seen: AgentStatusEvent[] = [];
  const waiting: (() => void)[] = [];
  const unsubscribe = await events.subscribe(userId, {
    change(event) {
      seen.push(event);
      for (const wake of waiting.splice(0)) wake();
    },
    relisten() {},
  });
  t.teardown(async () => {
    unsubscribe();
    await events.close();
  });
  let cursor = 0;
  return {
    /** Resolves once `agentId` reaches `status` (after what was already awaited); the statuses it passed on the way. */
    async reach(agentId: string, status: string): Promise<string[]> {
      const passed: string[] = [];
      for (;;) {
        while (cursor < seen.length) {
          const event = seen[cursor++]!;
          if (event.agentId !== agentId) continue;
          passed.push(event.status);
          if (event.status === status) return passed;
        }
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
    },
  };
}

/** SIGKILL to the container's own process (its init), as `kill -9` on the host would send it. */
async function kill9(docker: Docker, containerId: string) {
  const pid = (await docker.getContainer(containerId).inspect()).State.Pid;
  process.kill(pid, 'SIGKILL');
}

t.test(
  'watchdog: kill -9 → restarted; crash loop → error and the mail; exits while no worker ran',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: MINIMAL,
      AGENT_PORT_RANGE: '30500-30599',
      AGENT_READY_TIMEOUT_MS: '20000',
    });
    const lifecycleEvents = new QueueEvents(QUEUES.lifecycle, {
      connection: { url: h.config.REDIS_URL },
      prefix: h.config.QUEUE_PREFIX,
    });
    await lifecycleEvents.waitUntilReady();
    t.teardown(() => lifecycleEvents.close());
    /** The outcome of the next container-event job about `containerId` whose outcome `wanted` accepts. */
    const eventOutcome = (containerId: string, wanted: (outcome: string) => boolean) =>
      new Promise<string>((resolve) => {
        const done = ({ jobId, returnvalue }: { jobId: string; returnvalue: string }) => {
          if (!jobId.startsWith(`event-${containerId}-`) || !wanted(String(returnvalue))) return;
          lifecycleEvents.off('completed', done as never);
          resolve(String(returnvalue));
        };
        lifecycleEvents.on('completed', done as never);
      });

    const owner = await h.subscribedUser('solo');
    const stranger = await h.subscribedUser('solo');
    const statuses = await statusesOf(t, h.config.DATABASE_SYSTEM_URL, owner.id);
    const provision = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(owner),
      payload: { name: 'watched', tier: 'starter' },
    });
    t.equal(provision.statusCode, 201, provision.body);
    const id: string = provision.json().agent.id;
    t.match(await h.provisioned(id), /^running/);
    await statuses.reach(id, 'running');
    const answers = async () => {
      const row = (await h.agentRow(id))!;
      return h.runtime.waitUntilReady(h.driver.gatewayUrl(row.host_port!, id));
    };
    const events = async (user = owner, query = '') =>
      h.app.inject({ method: 'GET', url: `/api/agents/${id}/events${query}`, headers: web(user) });

    await t.test('kill -9 of the running agent: the engine says so, it is started again and answers', async (t) => {
      // A second worker follows the same engine: one of them acts on each event.
      const second = await startWorkers(h.config);
      t.teardown(() => second.close());
      const containerId = (await h.agentRow(id))!.container_id!;
      await kill9(docker, containerId);
      t.same(
        await statuses.reach(id, 'running'),
        ['error', 'running'],
        'error (restarting) while down, then running: the engine is the truth',
      );
      t.equal((await h.agentRow(id))!.container_id, containerId, 'the same container, started again');
      t.ok(await answers(), 'its gateway answers again');

      const res = await events();
      t.equal(res.statusCode, 200, res.body);
      const list = res.json().events as {
        kind: string;
        exitCode: number | null;
        expected: boolean;
        oomKilled: boolean;
        logTail: string[];
      }[];
      t.same(
        list.map((e) => e.kind),
        ['restarted', 'exit'],
        'the exit and the restart, newest first: one of each whatever the number of workers',
      );
      t.match(list[1], { exitCode: 137, expected: false, oomKilled: false });
      t.ok(Array.isArray(list[1]!.logTail) && list[1]!.logTail.length <= 50, 'at most 50 lines of its output');
    });

    await t.test('a stop by its owner is an expected exit: recorded, not restarted', async (t) => {
      const containerId = (await h.agentRow(id))!.container_id!;
      const handled = eventOutcome(containerId, (o) => o === 'expected exit');
      await h.runtime.stop(id);
      t.equal(await handled, 'expected exit');
      t.equal((await h.agentRow(id))!.status, 'stopped');
      const [latest] = (await events()).json().events;
      t.has(latest, { kind: 'exit', expected: true });
      await h.runtime.start(id);
      await statuses.reach(id, 'running');
    });

    await t.test(
      'an exit a dead restore left (its container stopped, its mark set) is expected: no restart',
      async (t) => {
        const containerId = (await h.agentRow(id))!.container_id!;
        await h.withoutWorkers(async () => {
          // A restore stops the running agent's container, its status unchanged; its process died before finishing.
          await systemDb()
            .updateTable('agents')
            .set({ restoring_snapshot_id: randomUUID() })
            .where('id', '=', id)
            .execute();
          await docker.getContainer(containerId).stop();
          const context = createRuntimeContext(h.config, { warn() {}, error() {} });
          const watchdog = agentWatchdog({
            db: context.db,
            driver: context.driver,
            keyring: parseKeyring(h.config.ENCRYPTION_KEYS),
            exclusive: context.exclusive,
            queues: h.queues,
            log: { info() {}, warn() {} },
          });
          try {
            t.equal(
              await watchdog.handle({ containerId, kind: 'die' }),
              'expected exit',
              'expected: the reconciler finishing the restore brings the agent up (an error now stopped it doing so)',
            );
          } finally {
            await context.close();
          }
          t.match(await h.agentRow(id), { status: 'running', last_error: null }, 'the agent is not put in error');
          // What finishing the restore does: the mark cleared, the agent up again.
          await systemDb().updateTable('agents').set({ restoring_snapshot_id: null }).where('id', '=', id).execute();
          await docker.getContainer(containerId).start();
        });
        const [latest] = (await events()).json().events;
        t.match(latest, { kind: 'exit', expected: true }, 'recorded as an expected exit');
        t.ok(await answers(), 'it answers again');
      },
    );

    await t.test('events are the owner’s only; bad input is 400', async (t) => {
      t.equal((await events(stranger)).statusCode, 404, "another user's agent is not found");
      t.equal(
        (await h.app.inject({ method: 'GET', url: '/api/agents/not-a-uuid/events', headers: web(owner) })).statusCode,
        400,
      );
      t.equal((await events(owner, '?limit=0')).statusCode, 400);
      t.equal((await events(owner, '?limit=201')).statusCode, 400);
      t.equal((await events(owner, '?other=1')).statusCode, 400);
      t.equal((await events(owner, '?limit=1')).json().events.length, 1);
    });

    await t.test('an exit while no worker runs is found when one starts, and restarted', async (t) => {
      const containerId = (await h.agentRow(id))!.container_id!;
      await h.withoutWorkers(async () => {
        await kill9(docker, containerId);
        await docker.getContainer(containerId).wait({ condition: 'not-running' });
        t.equal((await h.agentRow(id))!.status, 'running', 'nobody noticed yet');
      });
      t.same(await statuses.reach(id, 'running'), ['error', 'running']);
      t.ok(await answers(), 'it answers again');
    });

    await t.test('three exits in five minutes: a crash loop, no more restarts, the owner’s mail queued', async (t) => {
      // The two before (kill -9 and the one while no worker ran) count: this is the third.
      const containerId = (await h.agentRow(id))!.container_id!;
      const handled = eventOutcome(containerId, (o) => o === 'crash loop');
      await kill9(docker, containerId);
      t.equal(await handled, 'crash loop');
      t.match(await h.agentRow(id), {
        status: /^error$/,
        last_error: 'Crash loop: it exited 3 times in 5 minutes and is no longer restarted',
      });
      const detail = await h.app.inject({ method: 'GET', url: `/api/agents/${id}`, headers: web(owner) });
      t.equal(
        detail.json().agent.lastError,
        'Crash loop: it exited 3 times in 5 minutes and is no longer restarted',
        'the owner reads why',
      );
      const loop = await systemDb()
        .selectFrom('agent_events')
        .select(['id'])
        .where('agent_id', '=', id)
        .where('kind', '=', 'crash-loop')
        .executeTakeFirstOrThrow();
      const mail = await h.queues.get(QUEUES.email).getJob(`crash-loop-${loop.id}`);
      t.match(
        mail,
        { name: AGENT_CRASH_LOOP_MAIL_JOB, data: { eventId: loop.id } },
        'the mail job names the event, nothing else',
      );
      t.equal((await docker.getContainer(containerId).inspect()).State.Running, false, 'not started again');
    });
  },
);
