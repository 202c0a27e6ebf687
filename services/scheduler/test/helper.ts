import type { Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { createQueues, QUEUES } from '@agentyard/queue';
import type { ServiceApp } from '@agentyard/http';
import { appDb, systemDb } from '@agentyard/testing';
import { buildApp, startWorkers as startSchedulerWorkers } from '../src/app.ts';
import { loadSchedulerConfig, type SchedulerConfig } from '../src/config.ts';
import type { SchedulerWorkers } from '../src/workers.ts';
import { startHooksReceiver } from './support/hooks-receiver.ts';

/** The configuration of this run, with `env` over it (e.g. a queue prefix of the test's own). */
export function testConfig(env: Record<string, string> = {}): SchedulerConfig {
  return loadSchedulerConfig({ ...process.env, ...env });
}

/** The scheduler service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string> = {}): Promise<ServiceApp> {
  const app = await buildApp(testConfig(env), { db: appDb() });
  t.teardown(() => app.close());
  return app;
}

/** The scheduler's workers exactly as worker.ts starts them, stopped when `t` ends. */
export async function startWorkers(t: Test, env: Record<string, string> = {}): Promise<SchedulerWorkers> {
  const workers = await startSchedulerWorkers(testConfig(env), { systemDb: systemDb() });
  t.teardown(() => workers.close());
  return workers;
}

/**
 * What a delivery test stands on: the scheduler app and its workers on a queue prefix of the test's
 * own (every-second crons allowed, `env` over it), a real HTTP server standing in for agents' hooks
 * with its token, and the queues (emptied and closed when `t` ends).
 */
export async function deliveryStage(t: Test, tag: string, env: Record<string, string> = {}) {
  const stageEnv = {
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-${tag}-${randomBytes(3).toString('hex')}`,
    SCHEDULER_MIN_INTERVAL_SECONDS: '*:1',
    ...env,
  };
  const token = randomBytes(24).toString('base64url');
  const receiver = await startHooksReceiver(token);
  t.teardown(() => receiver.close());
  const app = await build(t, stageEnv);
  const workers = await startWorkers(t, stageEnv);
  const queues = createQueues({ redisUrl: process.env.REDIS_URL!, prefix: stageEnv.QUEUE_PREFIX });
  t.teardown(async () => {
    await queues.get(QUEUES.scheduledPrompts).obliterate({ force: true });
    await queues.close();
  });
  return { env: stageEnv, token, receiver, app, workers, queues };
}
