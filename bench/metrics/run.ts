// bench/metrics: one pass of the agents worker's metrics sampler (one engine stats call per running
// agent, bounded concurrency, one batched insert, the hour's rollup, pruning) over N running
// containers of the minimal gateway image, at two concurrencies. Reports the pass's wall time and
// the CPU it costs per minute at the default interval (one pass a minute): the sampling process's
// own CPU and the container engine's (Podman's API service, from /proc), PostgreSQL left out.
// The containers are made straight on the engine (no state disk or warm pool: what is measured is
// sampling, not provisioning) and named in agents rows as the provisioning worker would.
// Usage: node bench/metrics/run.ts [--agents 200] [--passes 3]
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { dropDatabase } from '@agentyard/db/admin';
import { createSystemDb } from '@agentyard/db/system';
import { createDockerDriver, LABELS } from '@agentyard/runtime';
import { ADMIN_URL, ensureDataServices, prepareDatabase } from '../../scripts/lib/platform.ts';
import { preparePlatformExtras } from '../../scripts/lib/extras.ts';
import { sampleAgentMetrics } from '../../services/agents/src/domain/telemetry/privileged/metrics-sampler.ts';

const { values } = parseArgs({
  options: { agents: { type: 'string', default: '200' }, passes: { type: 'string', default: '3' } },
});
const n = Number(values.agents);
const passes = Number(values.passes);
const IMAGE = 'localhost/agentyard-gateway-minimal:1';
const MB = 1024 ** 2;

ensureDataServices();
const database = `agentyard_bench_${randomBytes(3).toString('hex')}`;
const urls = await prepareDatabase(database);
const instance = `bench-metrics-${randomUUID().slice(0, 8)}`;
const env: Record<string, string> = { ...(process.env as Record<string, string>), ...urls };
Object.assign(env, await preparePlatformExtras({ ...env, NODE_ENV: 'test' }));
if (env.RUNTIME_DRIVER !== 'docker') throw new Error('bench/metrics needs a container engine');
const docker = new Docker({ socketPath: env.DOCKER_HOST!.replace('unix://', '') });
const driver = createDockerDriver({
  dockerHost: env.DOCKER_HOST!,
  instance,
  defaultImage: IMAGE,
  publishHost: '127.0.0.1',
  pidsLimit: 256,
  stopTimeoutSeconds: 2,
  timeoutMs: 15_000,
  networkMode: '',
  configDir: '',
});
const system = createSystemDb(urls.DATABASE_SYSTEM_URL, { max: 4 });

/** CPU seconds a process has used (user + system), from /proc. */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
/** The engine's API service (Podman's `system service`), whose work the stats calls are. */
async function enginePid(): Promise<number | null> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes('podman\0system\0service')) return Number(pid);
  }
  return null;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const created: string[] = [];
try {
  const user = await system
    .insertInto('users')
    .values({ email: `${instance}@bench.invalid`, name: 'bench' })
    .returning('id')
    .executeTakeFirstOrThrow();
  console.log(`starting ${n} containers of ${IMAGE} ...`);
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < n) {
        const i = next++;
        const c = await docker.createContainer({
          Image: IMAGE,
          name: `${instance}-${i}`,
          Labels: { [LABELS.managed]: 'true', [LABELS.instance]: instance },
          HostConfig: { Memory: 256 * MB, Init: true, LogConfig: { Type: 'json-file', Config: {} } },
        });
        created.push(c.id);
        await c.start();
        await system
          .insertInto('agents')
          .values({
            user_id: user.id,
            name: `bench-${i}`,
            model: 'openrouter/auto',
            tools_profile: 'messaging',
            subdomain: `${instance}-${i}`,
            status: 'running',
            container_id: c.id,
          })
          .execute();
      }
    }),
  );
  console.log(`${n} running after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const engine = await enginePid();

  for (const concurrency of [8, 32]) {
    const walls: number[] = [];
    const ownCpu: number[] = [];
    const engineCpu: number[] = [];
    for (let p = 0; p < passes; p++) {
      const cpu0 = process.cpuUsage();
      const engine0 = engine ? await cpuSecondsOf(engine) : 0;
      const t0 = performance.now();
      const pass = await sampleAgentMetrics(system, driver, concurrency);
      walls.push(performance.now() - t0);
      const cpu = process.cpuUsage(cpu0);
      ownCpu.push((cpu.user + cpu.system) / 1e6);
      engineCpu.push(engine ? (await cpuSecondsOf(engine)) - engine0 : Number.NaN);
      if (pass.running !== n) throw new Error(`sampled ${pass.running} running of ${n}`);
    }
    const rows = await system
      .selectFrom('agent_metric_samples')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    console.log(
      `concurrency ${concurrency}: one pass over ${n} agents takes ${median(walls).toFixed(0)} ms (passes: ${walls.map((w) => w.toFixed(0)).join(', ')}); ` +
        `CPU per pass (= per minute at AGENT_METRICS_INTERVAL_MS=60000): sampler ${median(ownCpu).toFixed(2)} s, engine ${median(engineCpu).toFixed(2)} s; ${rows.n} sample rows so far`,
    );
  }
} finally {
  for (const id of created)
    await docker
      .getContainer(id)
      .remove({ force: true })
      .catch(() => undefined);
  await system.destroy();
  await dropDatabase(ADMIN_URL, database);
}
