import t from 'tap';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { QueueEvents } from 'bullmq';
import WebSocket from 'ws';
import { hashToken, randomToken } from '@agentyard/crypto';
import { createQueues, Job, QUEUES } from '@agentyard/queue';
import { DEFAULT_AGENT_IMAGE, LABELS } from '@agentyard/runtime';
import { createUserRow, startPlatform, systemDb } from '@agentyard/testing';
import { loadAgentsConfig } from '../../src/config.ts';
import { configApplyJobId } from '../../src/domain/runtime/config-apply.ts';
import { provisionJobId } from '../../src/domain/runtime/provisioning.ts';
import { startWorkers } from '../../src/app.ts';
import { execIn } from '../agents-harness.ts';

// The real OpenClaw gateway image, through the real edge: the generated config must be one the
// gateway starts with, and every lifecycle operation is observed on the container. Heavy (~1.3 GB,
// ~25 s to ready): one gateway at a time, removed as soon as the test ends.
t.setTimeout(900_000);
t.test(
  'a provisioned agent runs the real OpenClaw gateway behind the runtime proxy',
  { skip: process.env.RUNTIME_DRIVER !== 'docker' && 'no container engine' },
  async (t) => {
    const own = `${process.env.QUEUE_PREFIX}-oc${randomBytes(3).toString('hex')}`;
    // The agent starts in a warm container: the real gateway launched by the waiting launcher, with its config handed over.
    const env = {
      QUEUE_PREFIX: own,
      RUNTIME_INSTANCE: own,
      AGENT_PORT_RANGE: '34000-34999',
      AGENT_IMAGE: DEFAULT_AGENT_IMAGE,
      AGENT_READY_TIMEOUT_MS: '240000',
      RATE_LIMITS: 'backend-api=100000',
      RUNTIME_WARM_POOL: 'collective=1',
      // The launcher's path: the gateway boots once claimed (test/warm-first-reply-journey.test.ts has the booted one).
      RUNTIME_WARM_BOOT: 'on-claim',
    };
    const platform = await startPlatform(['agents'], env);
    t.teardown(() => platform.stop());
    const config = loadAgentsConfig({ ...platform.env });
    const workers = await startWorkers(config);
    const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: own });
    const events = new QueueEvents(QUEUES.provisioning, { connection: { url: config.REDIS_URL }, prefix: own });
    const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
    const containers = (agentId: string) =>
      docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.instance}=${own}`], name: [`agentyard-agent-${agentId}-`] },
      });
    const rollbackTag = `rollback-${randomBytes(3).toString('hex')}`;
    t.teardown(async () => {
      await workers.context.runtime.settle();
      await workers.context.driver.warm?.drain();
      for (const c of await workers.context.driver.list()) {
        await workers.context.driver.remove(c.id);
        await workers.context.driver.removeState(c.agentId);
      }
      await docker
        .getImage(`localhost/agentyard-openclaw:${rollbackTag}`)
        .remove()
        .catch(() => undefined);
      await events.close();
      await queues.close();
      await workers.close();
    });

    const user = await createUserRow({ plan: 'collective' });
    await systemDb()
      .insertInto('subscriptions')
      .values({ id: `sub_${randomBytes(6).toString('hex')}`, user_id: user.id, status: 'active', plan: 'collective' })
      .execute();
    const sessionToken = randomToken();
    await systemDb()
      .insertInto('sessions')
      .values({ user_id: user.id, token_hash: hashToken(sessionToken), expires_at: new Date(Date.now() + 3600_000) })
      .execute();
    const webHeaders = {
      cookie: `agentyard-session=${sessionToken}`,
      origin: new URL(platform.env.PUBLIC_BASE_URL!).origin,
      'content-type': 'application/json',
    };
    const backendHeaders = {
      authorization: `Bearer ${platform.env.INTERNAL_API_KEY}`,
      'x-user-id': user.id,
      'content-type': 'application/json',
    };
    const backend = (path: string, init: RequestInit = {}) =>
      fetch(`${platform.backendUrl}${path}`, { ...init, headers: backendHeaders });

    await workers.context.runtime.topUpWarm();
    const res = await fetch(`${platform.webUrl}/api/agents/provision`, {
      method: 'POST',
      headers: webHeaders,
      body: JSON.stringify({ name: 'Claw', tier: 'pro', model: 'gpt-4' }),
    });
    t.equal(res.status, 201);
    const id = ((await res.json()) as { agent: { id: string } }).agent.id;
    const job = await Job.fromId(queues.get(QUEUES.provisioning), provisionJobId(id));
    t.match(await job!.waitUntilFinished(events, 300_000), /^running/, 'provision → running with the real gateway');
    const [container] = await containers(id);
    t.equal(container?.Image, DEFAULT_AGENT_IMAGE);
    t.equal(container?.State, 'running');
    t.ok(container?.Labels[LABELS.warm], 'started warm: the launcher handed over to the real gateway');

    const detail = await fetch(`${platform.webUrl}/api/agents/${id}`, { headers: webHeaders });
    t.equal(((await detail.json()) as { agent: { status: string } }).agent.status, 'running');

    const healthz = await backend(`/api/runtime/proxy/${id}/healthz`);
    t.equal(healthz.status, 200);
    t.same(await healthz.json(), { ok: true, status: 'live' }, "the gateway's /healthz through edge and proxy");
    const readyz = await backend(`/api/runtime/proxy/${id}/readyz`);
    t.same(
      await readyz.json(),
      { ready: true },
      "and its /readyz (OpenClaw refuses a request carrying the edge's forwarding headers)",
    );

    await t.test("the gateway's WebSocket control plane opens through the edge", async (t) => {
      const socket = new WebSocket(`${platform.backendUrl.replace('http', 'ws')}/api/runtime/proxy/${id}/`, {
        headers: backendHeaders,
      });
      const first = await new Promise<string>((resolve, reject) => {
        socket.once('message', (data) => resolve(data.toString()));
        socket.once('error', reject);
        socket.once('unexpected-response', (_req, r) => reject(new Error(`upgrade refused: ${r.statusCode}`)));
      });
      t.has(JSON.parse(first), { type: 'event', event: 'connect.challenge' });
      socket.close();
    });

    const act = async (action: string, body: object = {}) =>
      backend(`/api/agents/${id}/${action}`, { method: 'POST', body: JSON.stringify(body) });
    const state = async () => (await containers(id)).map((c) => c.State);
    const ready = async () =>
      workers.context.runtime.waitUntilReady((await workers.context.runtime.load(id))!.gateway_url!);

    t.equal((await act('stop')).status, 200);
    // Podman reports `stopped` until its cleanup of the container has run, `exited` after: both are stopped.
    const stopped = await state();
    t.equal(stopped.length, 1, 'stop: one container');
    t.match(stopped[0], /^(exited|stopped)$/, 'stop');
    t.equal((await act('start')).status, 200);
    t.same(await state(), ['running'], 'start');
    const startedBefore = (await docker.getContainer((await containers(id))[0]!.Id).inspect()).State.StartedAt;
    t.equal((await act('restart')).status, 200);
    const startedAfter = (await docker.getContainer((await containers(id))[0]!.Id).inspect()).State.StartedAt;
    t.not(startedAfter, startedBefore, 'restart: the container started again');
    t.ok(await ready(), 'the gateway is ready after restart');

    await t.test(
      "a saved configuration: the real gateway takes the user's settings live, in its openclaw.json",
      async (t) => {
        const before = (await containers(id)).map((c) => c.Id);
        const settings = {
          logging: { level: 'debug', consoleLevel: 'warn' },
          agents: { defaults: { timeoutSeconds: 300, maxConcurrent: 2 } },
          tools: { deny: ['exec'] },
          channels: {
            telegram: { enabled: false, allowFrom: ['12345'], dmPolicy: 'allowlist' },
            discord: { enabled: false, allowFrom: ['alice'] },
          },
          session: { dmScope: 'per-peer', resetTriggers: ['/fresh'] },
          skills: { install: { nodeManager: 'pnpm' } },
          messages: { groupChat: { mentionPatterns: ['@claw-in-test'] } },
        };
        const saved = await fetch(`${platform.webUrl}/api/agents/${id}/config`, {
          method: 'PUT',
          headers: webHeaders,
          body: JSON.stringify({ config: settings }),
        });
        t.equal(saved.status, 200);
        const { updatedAt } = (await saved.json()) as { updatedAt: string };
        const lifecycleEvents = new QueueEvents(QUEUES.lifecycle, {
          connection: { url: config.REDIS_URL },
          prefix: own,
        });
        t.teardown(() => lifecycleEvents.close());
        await lifecycleEvents.waitUntilReady();
        const apply = await Job.fromId(queues.get(QUEUES.lifecycle), configApplyJobId(id, updatedAt));
        // OpenClaw 2026.9.6 hot-reloads every path these settings change: the same container keeps running.
        t.equal(await apply!.waitUntilFinished(lifecycleEvents, 120_000), 'hot-reloaded');
        t.same(await state(), ['running'], 'one container, running');
        t.same(
          (await containers(id)).map((c) => c.Id),
          before,
          'the same container: applied without a restart',
        );
        t.ok(await ready(), 'the real gateway is ready with the saved settings');
        const exec = async (cmd: string[]) => execIn(docker, (await containers(id))[0]!.Id, cmd);
        t.equal(
          await exec([
            'sh',
            '-c',
            'grep -q "@claw-in-test" "$OPENCLAW_CONFIG_PATH" && grep -q "per-peer" "$OPENCLAW_CONFIG_PATH"',
          ]),
          0,
          'its openclaw.json holds them',
        );
      },
    );

    const broken = await act('update', { image: 'localhost/agentyard-no-such-image:1' });
    t.equal(broken.status, 500);
    t.same(
      (await containers(id)).map((c) => [c.Image, c.State]),
      [[DEFAULT_AGENT_IMAGE, 'running']],
      'update failure: the previous image runs again',
    );

    await docker.getImage(DEFAULT_AGENT_IMAGE).tag({ repo: 'localhost/agentyard-openclaw', tag: rollbackTag });
    const updated = await act('update', { image: `localhost/agentyard-openclaw:${rollbackTag}` });
    t.equal(updated.status, 200, "update waits for the new gateway's /readyz, then swaps");
    t.same(
      (await containers(id)).map((c) => [c.Image, c.State]),
      [[`localhost/agentyard-openclaw:${rollbackTag}`, 'running']],
    );

    const exec = async (cmd: string[]) => execIn(docker, (await containers(id))[0]!.Id, cmd);
    t.equal(await exec(['sh', '-c', 'echo tea > /home/node/.openclaw/MEMORY-test.md']), 0);
    t.equal((await act('reset-memory')).status, 200);
    t.equal(await exec(['test', '-e', '/home/node/.openclaw/MEMORY-test.md']), 1, 'reset-memory: the memory is gone');
    t.same(await state(), ['running']);

    const deleted = await backend(`/api/agents/${id}`, { method: 'DELETE' });
    t.same(await deleted.json(), { id, deleted: true });
    t.same(await containers(id), [], 'delete: no container left');
    t.notOk(await systemDb().selectFrom('agents').select('id').where('id', '=', id).executeTakeFirst());
  },
);
