import type { Test } from 'tap';
import type { ServiceApp } from '@agentyard/http';
import { appDb, systemDb } from '@agentyard/testing';
import { buildApp, startWorkers as startSchedulerWorkers } from '../src/app.ts';
import { loadSchedulerConfig, type SchedulerConfig } from '../src/config.ts';
import type { SchedulerWorkers } from '../src/workers.ts';

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
