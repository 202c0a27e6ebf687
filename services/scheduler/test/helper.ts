import type { Test } from 'tap';
import { createServer, type ServiceApp } from '@agentyard/http';
import { appDb, systemDb } from '@agentyard/testing';
import schedulerApp from '../src/app.ts';
import { loadSchedulerConfig, type SchedulerConfig } from '../src/config.ts';
import { startSchedulerWorkers, type SchedulerWorkers } from '../src/queue-workers.ts';

/** The configuration of this run, with `env` over it (e.g. a queue prefix of the test's own). */
export function testConfig(env: Record<string, string> = {}): SchedulerConfig {
  return loadSchedulerConfig({ ...process.env, ...env });
}

/** The scheduler service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string> = {}): Promise<ServiceApp> {
  const config = testConfig(env);
  const app = createServer({ name: 'scheduler', logLevel: 'silent' });
  await app.register(schedulerApp, { config, db: appDb() });
  await app.ready();
  t.teardown(() => app.close());
  return app;
}

const quiet = { error() {}, info() {} };

/** The scheduler's workers exactly as worker.ts starts them, stopped when `t` ends. */
export async function startWorkers(t: Test, env: Record<string, string> = {}): Promise<SchedulerWorkers> {
  const workers = await startSchedulerWorkers(testConfig(env), { log: quiet, db: systemDb() });
  t.teardown(() => workers.close());
  return workers;
}
