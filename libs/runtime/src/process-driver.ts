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

const agentDir = (root: string, agentId: string) => join(root, agentId);
/** The agent's HOME: its OpenClaw state is `.openclaw` in it. */
const homeOf = (root: string, agentId: string) => join(agentDir(root, agentId), 'home');
const stateDirOf = (root: string, agentId: string) => join(homeOf(root, agentId), '.openclaw');
const configFileOf = (root: string, agentId: string) => join(stateDirOf(root, agentId), 'openclaw.json');
const recordFile = (root: string, id: string) => join(root, 'containers', `${id}.json`);

async function readRecord(root: string, id: string): Promise<ProcessRecord | null> {
  if (!/^[a-f0-9-]{36}$/.test(id)) return null;
  try {
    return JSON.parse(await readFile(recordFile(root, id), 'utf8')) as ProcessRecord;
  } catch {
    return null;
  }
}

async function mustRead(root: string, id: string): Promise<ProcessRecord> {
  const record = await readRecord(root, id);
  if (!record) throw new RuntimeError(`process runtime: no agent process ${id}`);
  return record;
}

async function writeRecord(root: string, record: ProcessRecord): Promise<void> {
  await mkdir(join(root, 'containers'), { recursive: true });
  await writeFile(recordFile(root, record.id), JSON.stringify(record));
}

const alive = async (record: ProcessRecord) =>
  record.pid !== null && record.pidStartTicks !== null && (await procStartTicks(record.pid)) === record.pidStartTicks;

async function infoOf(record: ProcessRecord): Promise<ContainerInfo> {
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
}

/** The gateway runs on the host: it listens on loopback at the agent's own port. */
function onHost(text: string, hostPort: number): string {
  const config = JSON.parse(text) as { gateway?: Record<string, unknown> };
  config.gateway = { ...config.gateway, bind: 'loopback', port: hostPort };
  return JSON.stringify(config, null, 2);
}

/** Its home with its state, secret files and config, and its record (not yet started); the record's id. */
async function createAgentProcess(root: string, spec: AgentContainerSpec): Promise<string> {
  if (!existsSync(spec.image)) throw new RuntimeError(`process runtime: gateway entry ${spec.image} does not exist`);
  const state = stateDirOf(root, spec.agentId);
  await mkdir(state, { recursive: true, mode: 0o700 });
  await writeSecretFiles(state, spec.secretFiles ?? {});
  await writeFile(configFileOf(root, spec.agentId), onHost(spec.config, spec.hostPort), { mode: 0o600 });
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
  await writeRecord(root, record);
  return record.id;
}

/** Starts the agent's supervisor (a new process group) and records its pid; a paused one is continued. */
async function startAgentProcess(root: string, options: ProcessDriverOptions, id: string): Promise<void> {
  const record = await mustRead(root, id);
  // Running, or paused: a start continues it.
  if (await alive(record)) return void process.kill(-record.pid!, 'SIGCONT');
  const home = homeOf(root, record.agentId);
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
  await writeRecord(root, record);
}

/** SIGTERM to the agent's process group, SIGKILL once the grace has passed; returns once it is gone. */
async function stopAgentProcess(record: ProcessRecord, stopTimeoutSeconds: number): Promise<void> {
  if (!(await alive(record))) return;
  const pid = record.pid!;
  process.kill(-pid, 'SIGTERM');
  // A paused (SIGSTOPped) group handles the SIGTERM only once continued.
  process.kill(-pid, 'SIGCONT');
  const deadline = Date.now() + stopTimeoutSeconds * 1000;
  while (Date.now() < deadline && (await alive(record))) await delay(50);
  if (await alive(record)) process.kill(-pid, 'SIGKILL');
  while (await alive(record)) await delay(20);
}

/** The agent's process group stopped or continued by signal: the freezer of a process agent. */
async function signalAgentProcess(root: string, id: string, signal: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
  const record = await mustRead(root, id);
  if (await alive(record)) process.kill(-record.pid!, signal);
}

/** The gateway's memory and its CPU use on average since it started, from /proc; zeros when it does not run. */
async function processStats(record: ProcessRecord): Promise<ContainerStats> {
  if (!(await alive(record))) return { cpuPercent: 0, memoryBytes: 0, memoryLimitBytes: 0 };
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
}

async function listRecords(root: string): Promise<ProcessRecord[]> {
  const files = await readdir(join(root, 'containers')).catch(() => [] as string[]);
  return (await Promise.all(files.map((f) => readRecord(root, f.replace(/\.json$/, ''))))).filter(
    (r): r is ProcessRecord => r !== null,
  );
}

/**
 * Agents as supervised child processes on local ports: the same gateway, no container engine.
 * The default when no engine can be had, so `npm start` works anywhere; not an isolation boundary.
 */
export function createProcessDriver(options: ProcessDriverOptions): RuntimeDriver {
  const root = join(options.dataDir, options.instance);
  const stopRecord = (record: ProcessRecord) => stopAgentProcess(record, options.stopTimeoutSeconds);

  const driver: RuntimeDriver = {
    kind: 'process',
    defaultImage: options.defaultImage,
    async version() {
      return { engine: 'process', version: process.version };
    },
    create: (spec) => createAgentProcess(root, spec),
    start: (id) => startAgentProcess(root, options, id),
    async stop(id) {
      const record = await readRecord(root, id);
      if (record) await stopRecord(record);
    },
    pause: (id) => signalAgentProcess(root, id, 'SIGSTOP'),
    unpause: (id) => signalAgentProcess(root, id, 'SIGCONT'),
    async replaceConfig(id, config) {
      const record = await mustRead(root, id);
      const file = configFileOf(root, record.agentId);
      // Written under another name and renamed into place: the watching gateway never reads half a file.
      await writeFile(`${file}.partial`, onHost(config, record.hostPort), { mode: 0o600 });
      await rename(`${file}.partial`, file);
    },
    async readConfig(id) {
      const record = await mustRead(root, id);
      return readFile(configFileOf(root, record.agentId), 'utf8').catch(() => null);
    },
    async restart(id) {
      await driver.stop(id);
      await driver.start(id);
    },
    async inspect(id) {
      const record = await readRecord(root, id);
      return record ? infoOf(record) : null;
    },
    async stats(id) {
      const record = await readRecord(root, id);
      return record ? processStats(record) : null;
    },
    async remove(id) {
      const record = await readRecord(root, id);
      if (!record) return;
      await stopRecord(record);
      await rm(recordFile(root, id), { force: true });
    },
    async list(filter = {}) {
      const records = await listRecords(root);
      return Promise.all(records.filter((r) => !filter.agentId || r.agentId === filter.agentId).map(infoOf));
    },
    async removeState(agentId) {
      await rm(homeOf(root, agentId), { recursive: true, force: true });
    },
    stateDirectory: (agentId) => ({ path: stateDirOf(root, agentId) }),
    gatewayUrl(hostPort) {
      return `http://127.0.0.1:${hostPort}`;
    },
    async close() {},
  };
  return driver;
}
