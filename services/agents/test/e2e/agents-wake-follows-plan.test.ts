import t from 'tap';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { Redis } from 'ioredis';
import { agentActivity } from '@agentyard/queue';
import { systemDb, useOwnDatabase } from '@agentyard/testing';
import { backend, execIn, startAgents, web } from '../agents-harness.ts';

// This file's sweep hibernates whatever idles in the agents table it reads: a database of its own.
await useOwnDatabase(t);

// Regression (issue 29): a wake from a stop brought the agent up at the size it had when it went to
// sleep, whatever its owner's plan had become meanwhile; a start followed the plan, a wake did not.
const GB = 1024 ** 3;
t.test(
  "a wake from a stop brings the agent up on its owner's current plan, its files kept (real engine)",
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    t.setTimeout(300_000);
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const h = await startAgents(t, {
      AGENT_IMAGE: 'localhost/agentyard-gateway-minimal:1',
      AGENT_PORT_RANGE: '39800-39899',
      AGENT_READY_TIMEOUT_MS: '60000',
      HIBERNATE_PAUSE_AFTER: '300ms',
      HIBERNATE_STOP_AFTER: '2s',
      HIBERNATE_SWEEP_EVERY_MS: '200',
      HIBERNATE_ACTIVITY_EVERY_MS: '100',
    });
    const redis = new Redis(h.config.REDIS_URL);
    t.teardown(() => redis.disconnect());
    const activity = agentActivity(redis, { prefix: h.config.QUEUE_PREFIX, everyMs: 100 });
    const user = await h.subscribedUser('collective');
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/agents/provision',
      headers: web(user),
      payload: { name: 'sleeper' },
    });
    t.equal(res.statusCode, 201, res.body);
    const id = res.json().agent.id as string;
    // Held awake until its file is written (an exec needs it running).
    const provisioning = await activity.hold(id);
    t.match(await h.provisioned(id), /^running/);

    /**
     * Once the agent sleeps that deep, by its row and by the engine (polled: the sweep's effect has no
     * event of its own; the row says stopped before the gateway has exited).
     */
    const asleep = async (depth: 'paused' | 'stopped', deadlineMs = 30_000) => {
      const deadline = Date.now() + deadlineMs;
      for (;;) {
        const row = (await h.agentRow(id))!;
        if (
          row.status === 'suspended' &&
          row.hibernation === depth &&
          (await h.driver.inspect(row.container_id!))?.state === depth
        )
          return;
        if (Date.now() > deadline)
          throw new Error(`the agent ${depth}: not within ${deadlineMs} ms (${row.status}/${row.hibernation})`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    const container = async () => docker.getContainer((await h.agentRow(id))!.container_id!).inspect();
    /** A request wakes the agent; it is held awake while `check` looks at it, as a turn under way holds it (the sweep leaves it be). */
    const wake = async (check: () => Promise<void>) => {
      const release = await activity.hold(id);
      try {
        const answer = await h.app.inject({
          method: 'GET',
          url: `/api/runtime/proxy/${id}/healthz`,
          headers: backend(user),
        });
        t.equal(answer.statusCode, 200, `the request waking it is answered: ${answer.body}`);
        await check();
      } finally {
        release();
      }
    };
    const plan = async (to: string) =>
      systemDb().updateTable('subscriptions').set({ plan: to }).where('user_id', '=', user.id).execute();

    const first = await container();
    t.equal(first.HostConfig.Memory, 4 * GB, "collective's 4 GB");
    const kept = `kept-${randomBytes(4).toString('hex')}`;
    t.equal(
      await execIn(docker, first.Id, ['sh', '-c', `echo ${kept} > /home/node/.openclaw/kept.txt`]),
      0,
      'a file on its state disk',
    );
    provisioning();

    // Paused, it still holds its memory as a running agent does: a resume keeps its size until its next start.
    await asleep('paused');
    await plan('solo');
    await wake(async () => {
      t.equal((await container()).Id, first.Id, 'resumed from a pause: the same container');
      t.has(
        await h.agentRow(id),
        { status: 'running', plan: 'collective', tools_profile: 'coding' },
        'on the plan it was started on',
      );
    });

    // Stopped: the wake is a start, on the solo plan its owner has now.
    await asleep('stopped');
    let woken = first;
    await wake(async () => {
      woken = await container();
      t.not(woken.Id, first.Id, 'a new container');
      t.equal(woken.HostConfig.Memory, 2 * GB, "solo's 2 GB");
      t.equal(woken.HostConfig.NanoCpus, 1e9, "solo's one CPU");
      t.has(
        await h.agentRow(id),
        { status: 'running', plan: 'solo', tools_profile: 'messaging' },
        'the row names solo and its tools profile',
      );
      t.equal(
        await execIn(docker, woken.Id, ['sh', '-c', `grep -q ${kept} /home/node/.openclaw/kept.txt`]),
        0,
        'its file is still there',
      );
    });

    // The same plan at the next wake: its container is started again, not made again.
    await asleep('stopped');
    await wake(async () => {
      t.equal((await container()).Id, woken.Id, 'no new container when the plan is unchanged');
    });
  },
);
