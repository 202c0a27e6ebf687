import type { Test } from 'tap';
import { createServer, type ServiceApp } from '@agentyard/http';
import { appDb } from '@agentyard/testing';
import traderApp from '../src/app.ts';
import { loadTraderConfig } from '../src/config.ts';

/** The trader service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string | undefined> = {}): Promise<ServiceApp> {
  const config = loadTraderConfig({ ...process.env, ...env });
  const app = createServer({ name: 'trader', logLevel: 'silent' });
  await app.register(traderApp, { config, db: appDb() });
  await app.ready();
  t.teardown(() => app.close());
  return app;
}
