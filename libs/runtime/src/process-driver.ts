import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import {
  RuntimeError,
  type AgentContainerSpec,
  type ContainerInfo,
  type ContainerStats,
  type RuntimeDriver,
} from './driver.ts';
import { writeSecretFiles } from './secret-files.ts';

const SUPERVISOR = fileURLToPath(new URL('./process-supervisor.mjs', import.meta.url));

export interface ProcessDriverOptions {
  /** Each agent's home (config, state) and its record live under `<dataDir>/<instance>/`. */
  dataDir: string;
  instance: string;
  /** The gateway entry script run with Node when an agent names none (its "image"). */
  defaultImage: string;
  nodeBinary: string;
  stopTimeoutSeconds: number;
}

/** What the driver keeps per agent "container": the record survives the platform's restarts. */
interface ProcessRecord {
  id: string;
  agentId: string;
  userId: string;
  image: string;
  hostPort: number;
  pid: number | null;
  startedAt: string | null;
  /** The pid's start time (from /proc), so a recycled pid is not mistaken for the agent. */
  pidStartTicks: string | null;
}

/** Whether the process is stopped by a signal (state T): a paused agent's supervisor. */
async function stoppedBySignal(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
}

async function procStartTicks(pid: number): Promise<string | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Agents as supervised child processes on local ports: the same gateway, no container engine.
 * The default when no engine can be had, so `npm start` works anywhere; not an isolation boundary.
 */
export function createProcessDriver(options: ProcessDriverOptions): RuntimeDriver {
  const root = join(options.dataDir, options.instance);
  const agentDir = (agentId: string) => join(root, agentId);
  const recordFile = (id: string) => join(root, 'containers', `${id}.json`);

  const readRecord = async (id: string): Promise<ProcessRecord | null> => {
    if (!/^[a-f0-9-]{36}$/.test(id)) return null;
    try {
      return JSON.parse(await readFile(recordFile(id), 'utf8')) as ProcessRecord;
    } catch {
      return null;
    }
  };
  const writeRecord = async (record: ProcessRecord) => {
    await mkdir(join(root, 'containers'), { recursive: true });
    await writeFile(recordFile(record.id), JSON.stringify(record));
  };
  const alive = async (record: ProcessRecord) =>
    record.pid !== null && record.pidStartTicks !== null && (await procStartTicks(record.pid)) === record.pidStartTicks;
  const toInfo = async (record: ProcessRecord): Promise<ContainerInfo> => {
    const running = await alive(record);
    return {
      id: record.id,
      agentId: record.agentId,
      userId: record.userId,
      image: record.image,
      state: running
        ? (await stoppedBySignal(record.pid!))
          ? 'paused'
          : 'running'
        : record.startedAt
          ? 'stopped'
          : 'created',
      hostPort: record.hostPort,
      startedAt: running ? record.startedAt : null,
    };
  };
  const mustRead = async (id: string) => {
    const record = await readRecord(id);
    if (!record) throw new RuntimeError(`process runtime: no agent process ${id}`);
    return record;
  };

  const stopRecord = async (record: ProcessRecord) => {
    if (!(await alive(record))) return;
    const pid = record.pid!;
    process.kill(-pid, 'SIGTERM');
    // A paused (SIGSTOPped) group handles the SIGTERM only once continued.
    process.kill(-pid, 'SIGCONT');
    const deadline = Date.now() + options.stopTimeoutSeconds * 1000;
    while (Date.now() < deadline && (await alive(record))) await delay(50);
    if (await alive(record)) process.kill(-pid, 'SIGKILL');
    while (await alive(record)) await delay(20);
  };

  /** The gateway runs on the host: it listens on loopback at the agent's own port. */
  const onHost = (text: string, hostPort: number) => {
    const config = JSON.parse(text) as { gateway?: Record<string, unknown> };
    config.gateway = { ...config.gateway, bind: 'loopback', port: hostPort };
    return JSON.stringify(config, null, 2);
  };

  const driver: RuntimeDriver = {
    kind: 'process',
    defaultImage: options.defaultImage,

    async version() {
      return { engine: 'process', version: process.version };
    },

    async create(spec: AgentContainerSpec) {
      if (!existsSync(spec.image))
        throw new RuntimeError(`process runtime: gateway entry ${spec.image} does not exist`);
      const home = join(agentDir(spec.agentId), 'home');
      await mkdir(join(home, '.openclaw'), { recursive: true, mode: 0o700 });
      await writeSecretFiles(join(home, '.openclaw'), spec.secretFiles ?? {});
      await writeFile(join(home, '.openclaw', 'openclaw.json'), onHost(spec.config, spec.hostPort), { mode: 0o600 });
      const record: ProcessRecord = {
        id: randomUUID(),
        agentId: spec.agentId,
        userId: spec.userId,
        image: spec.image,
        hostPort: spec.hostPort,
        pid: null,
        startedAt: null,
        pidStartTicks: null,
      };
      await writeRecord(record);
      return record.id;
    },

    async start(id) {
      const record = await mustRead(id);
      // Running, or paused: a start continues it.
      if (await alive(record)) return void process.kill(-record.pid!, 'SIGCONT');
      const home = join(agentDir(record.agentId), 'home');
      // Only what a process needs to run; no platform setting or secret is inherited.
      const child = spawn(options.nodeBinary, [SUPERVISOR, record.image, 'gateway'], {
        cwd: home,
        env: {
          HOME: home,
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          OPENCLAW_GATEWAY_PORT: String(record.hostPort),
          NODE_ENV: 'production',
        },
        detached: true,
        stdio: 'ignore',
      });
      const started = await new Promise<number>((resolve, reject) => {
        child.once('spawn', () => resolve(child.pid!));
        child.once('error', (error) => reject(new RuntimeError('process runtime: spawn failed', { cause: error })));
      });
      child.unref();
      record.pid = started;
      record.pidStartTicks = await procStartTicks(started);
      record.startedAt = new Date().toISOString();
      await writeRecord(record);
    },

    async stop(id) {
      const record = await readRecord(id);
      if (record) await stopRecord(record);
    },

    // The agent's process group stopped and continued by signal: the freezer of a process agent.
    async pause(id) {
      const record = await mustRead(id);
      if (await alive(record)) process.kill(-record.pid!, 'SIGSTOP');
    },

    async unpause(id) {
      const record = await mustRead(id);
      if (await alive(record)) process.kill(-record.pid!, 'SIGCONT');
    },

    async replaceConfig(id, config) {
      const record = await mustRead(id);
      const file = join(agentDir(record.agentId), 'home', '.openclaw', 'openclaw.json');
      // Written under another name and renamed into place: the watching gateway never reads half a file.
      await writeFile(`${file}.partial`, onHost(config, record.hostPort), { mode: 0o600 });
      await rename(`${file}.partial`, file);
    },

    async readConfig(id) {
      const record = await mustRead(id);
      return readFile(join(agentDir(record.agentId), 'home', '.openclaw', 'openclaw.json'), 'utf8').catch(() => null);
    },

    async restart(id) {
      await driver.stop(id);
      await driver.start(id);
    },

    async inspect(id) {
      const record = await readRecord(id);
      return record ? toInfo(record) : null;
    },

    async stats(id): Promise<ContainerStats | null> {
      const record = await readRecord(id);
      if (!record || !(await alive(record)))
        return record ? { cpuPercent: 0, memoryBytes: 0, memoryLimitBytes: 0 } : null;
      // The record's pid is the supervisor; the gateway is its child.
      const children = await readFile(`/proc/${record.pid}/task/${record.pid}/children`, 'utf8').catch(() => '');
      const pid = Number(children.trim().split(' ')[0]) || record.pid;
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpuSeconds = (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
      const elapsed = (Date.now() - Date.parse(record.startedAt ?? new Date().toISOString())) / 1000;
      return {
        cpuPercent: elapsed > 0 ? Math.round((cpuSeconds / elapsed) * 10000) / 100 : 0,
        memoryBytes: rssKb * 1024,
        memoryLimitBytes: 0,
      };
    },

    async remove(id) {
      const record = await readRecord(id);
      if (!record) return;
      await stopRecord(record);
      await rm(recordFile(id), { force: true });
    },

    async list(filter = {}) {
      const files = await readdir(join(root, 'containers')).catch(() => [] as string[]);
      const records = (await Promise.all(files.map((f) => readRecord(f.replace(/\.json$/, ''))))).filter(
        (r): r is ProcessRecord => r !== null,
      );
      return Promise.all(records.filter((r) => !filter.agentId || r.agentId === filter.agentId).map(toInfo));
    },

    async removeState(agentId) {
      await rm(join(agentDir(agentId), 'home'), { recursive: true, force: true });
    },

    stateDirectory: (agentId) => ({ path: join(agentDir(agentId), 'home', '.openclaw') }),

    gatewayUrl(hostPort) {
      return `http://127.0.0.1:${hostPort}`;
    },

    async close() {},
  };
  return driver;
}
