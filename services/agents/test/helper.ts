import type { Test } from 'tap';
import { createServer, type ServiceApp } from '@agentyard/http';
import { appDb } from '@agentyard/testing';
import agentsApp from '../src/app.ts';
import { loadAgentsConfig } from '../src/config.ts';

/** The agents service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string> = {}): Promise<ServiceApp> {
  const config = loadAgentsConfig({ ...process.env, ...env });
  const app = createServer({ name: 'agents', logLevel: 'silent' });
  await app.register(agentsApp, { config, db: appDb() });
  await app.ready();
  t.teardown(() => app.close());
  return app;
}
