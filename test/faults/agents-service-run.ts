import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { watch } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { QueueEvents } from 'bullmq';
import { repoRoot } from '@agentyard/config';
import { createQueues, jobOutcomes, QUEUES } from '@agentyard/queue';
import { LABELS } from '@agentyard/runtime';
import { loadAgentsConfig } from '../../services/agents/src/config.ts';
import { runtimeConfigDir } from '../../services/agents/src/domain/runtime/privileged/runtime-context.ts';
import { build } from '../../services/agents/test/helper.ts';
import { startAgentsWorker } from './agents-worker.ts';
import { killWorkers } from './worker-process.ts';

/** The minimal gateway image the agents fault tests run on the real engine. */
export const MINIMAL_GATEWAY = 'localhost/agentyard-gateway-minimal:1';
/** The gateway's state folder inside an agent's container. */
export const AGENT_HOME = '/home/node/.openclaw';

type Test = Parameters<typeof build>[0];

/**
 * One agents fault test's own platform: the agents service (in-process app for the owner's calls,
 * and as processes of its own to kill) and its worker on the file's own queue prefix, runtime
 * instance, port range and snapshot directory, the minimal gateway image on the real engine.
 * Everything it started is killed and removed when the test ends.
 */
export async function agentsServiceRun(
  t: Test,
  options: { name: string; ports: string; env?: Record<string, string> },
) {
  const docker = new Docker({ socketPath: process.env.DOCKER_HOST!.replace('unix://', '') });
  const own = `${process.env.QUEUE_PREFIX ?? 'test'}-${options.name}-${randomBytes(4).toString('hex')}`;
  const snapshotDir = await mkdtemp(join(tmpdir(), 'agentyard-snapshots-'));
  const fileEnv = {
    QUEUE_PREFIX: own,
    RUNTIME_INSTANCE: own,
    AGENT_IMAGE: MINIMAL_GATEWAY,
    AGENT_PORT_RANGE: options.ports,
    AGENT_READY_TIMEOUT_MS: '30000',
    SNAPSHOT_STORE: 'directory',
    SNAPSHOT_DIR: snapshotDir,
    ...options.env,
  };
  const config = loadAgentsConfig({ ...process.env, ...fileEnv });
  const app = await build(t, fileEnv);
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: own });
  const eventsOf = async (queue: typeof QUEUES.provisioning | typeof QUEUES.lifecycle) => {
    const events = new QueueEvents(queue, { connection: { url: config.REDIS_URL }, prefix: own });
    await events.waitUntilReady();
    return events;
  };
  const provisioningEvents = await eventsOf(QUEUES.provisioning);
  const lifecycleEvents = await eventsOf(QUEUES.lifecycle);
  const processEnv = { ...process.env, ...fileEnv };
  const children: ChildProcess[] = [];
  /** The containers of this run's runtime instance. */
  const ours = () => docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${own}`] } });
  t.teardown(async () => {
    await killWorkers(children);
    for (const c of await ours())
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
    await provisioningEvents.close();
    await lifecycleEvents.close();
    await queues.close();
    if (runtimeConfigDir(config)) await rm(join(runtimeConfigDir(config), own), { recursive: true, force: true });
    await rm(snapshotDir, { recursive: true, force: true });
  });

  return {
    docker,
    config,
    app,
    queues,
    snapshotDir,
    ours,
    /** How the run's provisioning and lifecycle jobs end. */
    provisioned: jobOutcomes(queues.get(QUEUES.provisioning), provisioningEvents),
    lifecycle: jobOutcomes(queues.get(QUEUES.lifecycle), lifecycleEvents),
    /** The folder holding every agent's state on the engine's host, and one agent's. */
    stateRoot: join(runtimeConfigDir(config)!, own, 'state'),
    stateDirOf: (agentId: string) => join(runtimeConfigDir(config)!, own, 'state', agentId),
    /** An agents worker process; resolves once it takes lifecycle jobs. */
    async startWorker(): Promise<ChildProcess> {
      // Its operations listener on a free port: fault files run side by side, each with its worker.
      const child = await startAgentsWorker({ ...processEnv, OPS_PORT: '0' }, queues);
      children.push(child);
      return child;
    },
    /** The agents service (`services/agents/src/main.ts`) as a process of its own; resolves with its URL once it listens. */
    async startService(): Promise<{ child: ChildProcess; url: string }> {
      const child = spawn(process.execPath, [join(repoRoot, 'services/agents/src/main.ts')], {
        env: { ...processEnv, AGENTS_PORT: '0', OPS_PORT: '0' },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      children.push(child);
      const [message] = (await Promise.race([
        once(child, 'message'),
        once(child, 'exit').then(([code]) => Promise.reject(new Error(`the agents service exited with ${code}`))),
      ])) as [{ ports: number[] }];
      return { child, url: `http://127.0.0.1:${message.ports[0]}` };
    },
  };
}

/**
 * The first entry of `dir` whose name `matches`, once it is there: an event of the directory (a
 * kill point chosen on the filesystem), or already there when the watch began.
 */
export function entryAppears(dir: string, matches: (name: string) => boolean): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const watcher = watch(dir, (_event, name) => {
      if (name && matches(name)) {
        watcher.close();
        resolve(name);
      }
    });
    readdir(dir).then(
      (names) => {
        const there = names.find(matches);
        if (there !== undefined) {
          watcher.close();
          resolve(there);
        }
      },
      (error) => {
        watcher.close();
        reject(error);
      },
    );
  });
}
