// bench/provision: platform overhead of provisioning, from `POST /api/agents/provision` to the
// agent's container started with its config, for N agents provisioned at once, twice in one run:
// cold (each container created and started on demand; the engine's create+start work counts as
// platform overhead) and warm (RUNTIME_WARM_POOL keeps N containers started and waiting; the
// overhead ends when the agent's config is handed to one). Only the runtime's own boot (the gateway
// inside the started container getting to /readyz) is left out, as issue 4 states. Each agent's
// time is split into phases from the timestamps the system records (job enqueued and picked up, the
// engine's own Created and StartedAt, the row's started_at). For reference, the same run measures
// the engine alone creating and starting N such containers at once.
// Uses the minimal gateway image (one OpenClaw gateway holds ~1.4 GB; the platform's work is the
// same). Usage: node bench/provision/run.ts [--agents 20]
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import Docker from 'dockerode';
import { QueueEvents } from 'bullmq';
import { identityHeaders } from '@agentyard/testing';
import { createQueues, Job, jobOutcomes, QUEUES } from '@agentyard/queue';
import { LABELS } from '@agentyard/runtime';
import { repoRoot } from '@agentyard/config';
import { dropDatabase } from '@agentyard/db/admin';
import { createSystemDb } from '@agentyard/db/system';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
import { preparePlatformExtras } from '../../scripts/lib/extras.ts';
import { runtimeConfigDir } from '../../services/agents/src/domain/runtime/privileged/runtime-context.ts';

const { values } = parseArgs({ options: { agents: { type: 'string', default: '20' } } });
const n = Number(values.agents);
const IMAGE = 'localhost/agentyard-gateway-minimal:1';

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const prefix = `bench-${randomUUID().slice(0, 8)}`;
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  ...urls,
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  QUEUE_PREFIX: prefix,
  RUNTIME_INSTANCE: prefix,
  IDENTITY_SECRET: randomBytes(32).toString('base64url'),
  ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
  AGENT_IMAGE: IMAGE,
  AGENT_PORT_RANGE: '20000-29999',
};
Object.assign(env, await preparePlatformExtras({ ...env, NODE_ENV: 'test' }), { RUNTIME_INSTANCE: prefix });
if (env.RUNTIME_DRIVER !== 'docker') throw new Error('bench/provision needs a container engine');
process.env.IDENTITY_SECRET = env.IDENTITY_SECRET;

// The system under test runs as in production, in processes of its own (the agents service and its
// worker), so this load generator does not share their event loop.
const children: ChildProcess[] = [];
const spawnService = (entry: string, childEnv: Record<string, string>) => {
  const child = spawn(process.execPath, [join(repoRoot, entry)], {
    env: childEnv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  return child;
};
const agentsService = spawnService('services/agents/src/main.ts', { ...env, AGENTS_PORT: '0' });
const [
  {
    ports: [agentsPort],
  },
] = await Promise.race([
  once(agentsService, 'message') as Promise<[{ ports: number[] }]>,
  once(agentsService, 'exit').then(([code]) => {
    throw new Error(`the agents service exited with ${code}`);
  }),
]);
const address = `http://127.0.0.1:${agentsPort}`;
let worker: ChildProcess | undefined;
const startWorker = (warm: number) => {
  worker = spawnService('services/agents/src/worker.ts', {
    ...env,
    RUNTIME_WARM_POOL: warm ? `label=${warm}` : '',
    RUNTIME_WARM_BOOT: 'on-claim',
  }); // the minimal gateway does not hot-reload a config
};
const stopWorker = async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGTERM');
    await once(worker, 'exit');
  }
};
startWorker(0);
const redisUrl = env.REDIS_URL || 'redis://127.0.0.1:6379';
const queues = createQueues({ redisUrl, prefix });
const events = new QueueEvents(QUEUES.provisioning, { connection: { url: redisUrl }, prefix });
const outcomes = jobOutcomes(queues.get(QUEUES.provisioning), events);
const docker = new Docker({ socketPath: env.DOCKER_HOST!.replace('unix://', '') });
const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 4 });

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (x: number) => x.toFixed(0).padStart(6);

try {
  // Baseline: the engine alone, N containers of the same image and settings (state volume, config
  // file mounted read-only, hardening, network mode) created and started at once.
  const configDir = await mkdtemp(join(tmpdir(), 'bench-provision-'));
  const configFiles = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const configFile = join(configDir, `${i}.json`);
      await writeFile(configFile, JSON.stringify({ gateway: { port: 18789 } }));
      return configFile;
    }),
  );
  const t0 = performance.now();
  const baseline = await Promise.all(
    configFiles.map(async (configFile, i) => {
      const c = await docker.createContainer({
        name: `agentyard-bench-baseline-${prefix}-${i}`,
        Image: IMAGE,
        Labels: { [LABELS.instance]: prefix },
        ExposedPorts: { '18789/tcp': {} },
        HostConfig: {
          PortBindings: { '18789/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          Init: true,
          PidsLimit: 1024,
          Memory: 8 * 1024 ** 3,
          NanoCpus: 2e9,
          Binds: [
            `agentyard-bench-${prefix}-${i}:/home/node/.openclaw`,
            `${configFile}:/home/node/.openclaw/openclaw.json:ro`,
          ],
          ...(env.RUNTIME_NETWORK_MODE ? { NetworkMode: env.RUNTIME_NETWORK_MODE } : {}),
        },
      });
      await c.start();
      // From the batch start, as the platform's figures are from each POST (all sent at once).
      return { c, took: performance.now() - t0 };
    }),
  );
  const base = baseline.map((b) => b.took);
  await Promise.all(baseline.map(({ c }) => c.remove({ force: true })));
  await Promise.all(
    baseline.map((_, i) =>
      docker
        .getVolume(`agentyard-bench-${prefix}-${i}`)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
  await rm(configDir, { recursive: true, force: true });

  // Priming: one agent through the whole path (connections, engine info, JIT), then deleted.
  const provisionOne = async (user: { id: string; email: string }, name: string) => {
    const res = await fetch(`${address}/api/agents/provision`, {
      method: 'POST',
      body: JSON.stringify({ name }),
      headers: {
        'content-type': 'application/json',
        ...identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email }),
      },
    });
    if (res.status !== 201) throw new Error(`provision answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { agent: { id: string } }).agent.id;
  };
  const primingUser = await system
    .insertInto('users')
    .values({ email: `bench-priming-${prefix}@example.test`, name: 'priming' })
    .returning(['id', 'email'])
    .executeTakeFirstOrThrow();
  await system
    .insertInto('subscriptions')
    .values({ id: `sub_${prefix}_priming`, user_id: primingUser.id, status: 'active', plan: 'label' })
    .execute();
  const prime = async () => {
    const primingId = await provisionOne(primingUser, 'priming');
    await outcomes.finished(`provision-${primingId}`, 120_000);
    await fetch(`${address}/api/agents/${primingId}`, {
      method: 'DELETE',
      headers: identityHeaders({ surface: 'backend', auth: 'service', userId: null, email: null }),
    });
  };
  await prime();

  // One burst of n agents provisioned at once, each by a user of its own; every agent deleted after.
  let burstNumber = 0;
  const burst = async () => {
    burstNumber++;
    const users = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const user = await system
          .insertInto('users')
          .values({ email: `bench-${burstNumber}-${i}-${prefix}@example.test`, name: `bench ${i}` })
          .returning(['id', 'email'])
          .executeTakeFirstOrThrow();
        await system
          .insertInto('subscriptions')
          .values({ id: `sub_${prefix}_${burstNumber}_${i}`, user_id: user.id, status: 'active', plan: 'label' })
          .execute();
        return user;
      }),
    );
    const wallStart = performance.now();
    const runs = await Promise.all(
      users.map(async (user, i) => {
        const sentAt = Date.now();
        const id = await provisionOne(user, `bench ${i}`);
        const answeredAt = Date.now();
        await outcomes.finished(`provision-${id}`, 120_000);
        const job = (await Job.fromId(queues.get(QUEUES.provisioning), `provision-${id}`))!;
        const row = await system
          .selectFrom('agents')
          .select(['status', 'host_port', 'container_id', 'started_at'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const engine = await docker.getContainer(row.container_id!).inspect();
        // Milliseconds since the POST was sent at each mark (started_at: the row written once the
        // container runs with the agent's config: after the engine's start call, or after a warm
        // container was handed the config).
        const at = (time: number | string | Date) => new Date(time).getTime() - sentAt;
        const marks = {
          answered: answeredAt - sentAt,
          enqueued: at(job.timestamp),
          pickedUp: at(job.processedOn!),
          engineCreated: at(engine.Created),
          engineStarted: at(engine.State.StartedAt),
          started: at(row.started_at!),
          running: at(job.finishedOn!),
        };
        return {
          id,
          marks,
          status: row.status,
          port: row.host_port,
          warm: Boolean(engine.Config.Labels?.[LABELS.warm]),
        };
      }),
    );
    const wallMs = performance.now() - wallStart;
    for (const r of runs) {
      const res = await fetch(`${address}/api/agents/${r.id}`, {
        method: 'DELETE',
        headers: identityHeaders({ surface: 'backend', auth: 'service', userId: null, email: null }),
      });
      if (res.status !== 200) throw new Error(`delete answered ${res.status}`);
    }
    const left = (
      await docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.instance}=${prefix}`], name: ['agentyard-agent-'] },
      })
    ).length;
    const leftPorts = (
      await system.selectFrom('agents').select('host_port').where('host_port', 'is not', null).execute()
    ).length;
    return { runs, wallMs, left, leftPorts };
  };

  const row = (label: string, xs: number[]) =>
    console.log(`| ${label} | ${ms(percentile(xs, 50))} | ${ms(percentile(xs, 99))} |`);
  const report = (title: string, { runs, wallMs, left, leftPorts }: Awaited<ReturnType<typeof burst>>) => {
    const phase = (from: keyof (typeof runs)[0]['marks'], to: keyof (typeof runs)[0]['marks']) =>
      runs.map((r) => r.marks[to] - r.marks[from]);
    const started = runs.map((r) => r.marks.started);
    const cold = runs.filter((r) => !r.warm);
    console.log(`\n| ${title}: ${n} agents at once, phase | p50 ms | p99 ms |`);
    console.log('|---|---|---|');
    row(
      'API: POST → job enqueued',
      runs.map((r) => r.marks.enqueued),
    );
    row(
      'API: POST → answered 201',
      runs.map((r) => r.marks.answered),
    );
    row('queue: enqueued → worker pickup', phase('enqueued', 'pickedUp'));
    if (cold.length === runs.length) {
      row(
        'worker: pickup → engine Created (row, secrets, port, config, launch slot)',
        phase('pickedUp', 'engineCreated'),
      );
      row(
        'engine: Created → StartedAt (create+start)',
        runs.map((r) => r.marks.engineStarted - r.marks.engineCreated),
      );
      row('worker: engine StartedAt → row started_at', phase('engineStarted', 'started'));
    } else {
      row('worker: pickup → config handed to a started container', phase('pickedUp', 'started'));
    }
    row('**POST → container started with its config (overhead)**', started);
    row("started → running (the runtime's own boot, excluded)", phase('started', 'running'));
    console.log(
      `\n${title}: overhead p50 ${percentile(started, 50).toFixed(0)} ms, p99 ${percentile(started, 99).toFixed(0)} ms; ${runs.length - cold.length}/${n} in warm containers; wall ${wallMs.toFixed(0)} ms`,
    );
    console.log(
      `running: ${runs.filter((r) => r.status === 'running').length}/${n}; distinct ports: ${new Set(runs.map((r) => r.port)).size}; after delete: ${left} containers, ${leftPorts} ports held`,
    );
    return started;
  };

  // Cold: every container created and started on demand.
  const cold = report('cold (no warm containers)', await burst());
  // Warm: the worker again, now keeping n containers started and waiting for agents.
  await stopWorker();
  startWorker(n);
  const waitingNow = async () =>
    (
      await docker.listContainers({
        filters: {
          label: [`${LABELS.instance}=${prefix}`, LABELS.warm],
          name: [`agentyard-warm-${prefix}-`],
          status: ['running'],
        },
      })
    ).length;
  const allWaiting = async () => {
    while ((await waitingNow()) < n) await new Promise((resolve) => setTimeout(resolve, 100));
  }; // the worker fills them in the background
  const fillStart = performance.now();
  await allWaiting();
  console.log(`\n${n} warm containers ready ${(performance.now() - fillStart).toFixed(0)} ms after the worker started`);
  await prime(); // the new worker process's connections and JIT, as for the cold burst
  await allWaiting();
  const warm = report(`warm (RUNTIME_WARM_POOL=label=${n})`, await burst());
  console.log(
    `\nreference: engine alone, ${n} create+start at once: p50 ${percentile(base, 50).toFixed(0)} ms, p99 ${percentile(base, 99).toFixed(0)} ms`,
  );
  console.log(
    `overhead p50 cold ${percentile(cold, 50).toFixed(0)} ms, warm ${percentile(warm, 50).toFixed(0)} ms (${(percentile(cold, 50) / percentile(warm, 50)).toFixed(1)}x); p99 cold ${percentile(cold, 99).toFixed(0)} ms, warm ${percentile(warm, 99).toFixed(0)} ms`,
  );
} finally {
  await stopWorker();
  for (const c of await docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${prefix}`] } }))
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined);
  await rm(join(runtimeConfigDir({ RUNTIME_CONFIG_DIR: env.RUNTIME_CONFIG_DIR ?? '' }), prefix), {
    recursive: true,
    force: true,
  }); // the agents' config and state directories
  await events.close();
  await queues.close();
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }),
  );
  await system.destroy();
  await dropDatabase(ADMIN_URL, database);
}
