import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import type Docker from 'dockerode';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { ClosableRedis, createQueues, jobOutcomes, QUEUES } from '@agentyard/queue';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { loadAgentsConfig } from '../src/config.ts';
import { agentOperations } from '../src/domain/runtime/agent-operations.ts';
import { configApplyJobId } from '../src/domain/runtime/config-apply.ts';
import { provisionJobId } from '../src/domain/runtime/provisioning.ts';
import { runtimeConfigDir } from '../src/domain/runtime/privileged/runtime-context.ts';
import { startWorkers } from '../src/app.ts';
import { build } from './helper.ts';

/**
 * The agents service and its workers on a queue prefix and runtime label of this test file's own
 * (test files run in parallel on one database), with the agents' containers removed at the end.
 */
export async function startAgents(t: Test, env: Record<string, string>) {
  const own = `${process.env.QUEUE_PREFIX ?? 'test'}-${randomBytes(4).toString('hex')}`;
  const fileEnv = { QUEUE_PREFIX: own, RUNTIME_INSTANCE: own, ...env };
  const app = await build(t, fileEnv);
  const config = loadAgentsConfig({ ...process.env, ...fileEnv });
  let workers = await startWorkers(config);
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX });
  const eventsOf = async (queue: typeof QUEUES.provisioning | typeof QUEUES.lifecycle) => {
    // A connection that closes even while it waits to reconnect (a Redis restarted under the test).
    const connection = new ClosableRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
    const events = new QueueEvents(queue, { connection, prefix: config.QUEUE_PREFIX });
    const close = events.close.bind(events);
    // Given a connection, QueueEvents leaves it open when it closes.
    events.close = () => close().finally(() => connection.disconnect());
    await events.waitUntilReady();
    return events;
  };
  const events = await eventsOf(QUEUES.provisioning);
  const lifecycleEvents = await eventsOf(QUEUES.lifecycle);
  const outcomes = jobOutcomes(queues.get(QUEUES.provisioning), events);
  const lifecycleOutcomes = jobOutcomes(queues.get(QUEUES.lifecycle), lifecycleEvents);
  const driver = workers.context.driver;
  t.teardown(async () => {
    // The workers first: a job still running (a channel's rebuild, say) would start a container after the sweep below.
    await workers.close();
    await driver.warm?.drain();
    for (const c of await driver.list()) {
      await driver.remove(c.id);
      await driver.removeState(c.agentId);
    }
    await events.close();
    await lifecycleEvents.close();
    await queues.close();
    // This file's instance directory of agents' config and state (the docker driver's).
    if (runtimeConfigDir(config))
      await rm(join(runtimeConfigDir(config), config.RUNTIME_INSTANCE), { recursive: true, force: true });
  });

  return {
    app,
    config,
    driver,
    queues,
    runtime: workers.context.runtime,

    /** Stops this file's workers, runs `meanwhile` with none running, and starts them again (as a redeploy would). */
    async withoutWorkers(meanwhile: () => Promise<void>): Promise<void> {
      await workers.close();
      await meanwhile();
      workers = await startWorkers(config);
    },

    /** A user with an active subscription (the interface's requirement for provisioning). */
    subscribedUser: (plan = 'label') => createUserRow({ plan }),

    /** Resolves with the provisioning job's outcome once the worker has finished with the agent. */
    async provisioned(agentId: string, timeoutMs = 120_000): Promise<string> {
      return outcomes.finished(provisionJobId(agentId), timeoutMs) as Promise<string>;
    },

    /** Resolves with the outcome of the job applying the configuration saved at `updatedAt` (as the save answered it). */
    async configApplied(agentId: string, updatedAt: string, timeoutMs = 60_000): Promise<string> {
      return lifecycleOutcomes.finished(configApplyJobId(agentId, updatedAt), timeoutMs) as Promise<string>;
    },

    /** Resolves with the outcome of a lifecycle job by its id (a snapshot, a restore's rebuild…) once the worker has finished it. */
    lifecycleJob: (jobId: string, timeoutMs = 60_000): Promise<string> =>
      lifecycleOutcomes.finished(jobId, timeoutMs) as Promise<string>,

    /** Resolves once that job has put itself back to wait (delayed), whether before or after the call. */
    async configWaiting(agentId: string, updatedAt: string): Promise<void> {
      const jobId = configApplyJobId(agentId, updatedAt);
      const moved = new Promise<void>((resolve) =>
        lifecycleEvents.on('delayed', (e) => {
          if (e.jobId === jobId) resolve();
        }),
      );
      if ((await queues.get(QUEUES.lifecycle).getJobState(jobId)) === 'delayed') return;
      await moved;
    },

    agentRow: (id: string) => systemDb().selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst(),

    /** Takes the agent's operation lock as another process's operation would, and holds it until `release()`. */
    async holdOperation(agentId: string) {
      const redis = new Redis(config.REDIS_URL);
      const exclusive = agentOperations({ redis, prefix: config.QUEUE_PREFIX, waitMs: 1000, log: { error() {} } });
      let finish!: () => void;
      let held!: Promise<void>;
      await new Promise<void>((started, failed) => {
        held = exclusive(
          agentId,
          () =>
            new Promise<void>((resolve) => {
              started();
              finish = resolve;
            }),
        );
        held.catch(failed);
      });
      return {
        async release() {
          finish();
          await held;
          redis.disconnect();
        },
      };
    },
  };
}

export const web = (user: { id: string; email: string }) =>
  identityHeaders({ surface: 'web', auth: 'session', userId: user.id, email: user.email });
export const backend = (user?: { id: string; email: string }) =>
  identityHeaders({ surface: 'backend', auth: 'service', userId: user?.id ?? null, email: user?.email ?? null });

/** Runs `cmd` in a container through the engine's exec API; its exit code. */
export async function execIn(docker: Docker, containerId: string, cmd: string[]): Promise<number | null> {
  const run = await docker.getContainer(containerId).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await run.start({});
  stream.resume();
  await new Promise((resolve) => stream.on('end', resolve));
  return (await run.inspect()).ExitCode;
}
