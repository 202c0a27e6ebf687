import type { Test } from 'tap';
import type { ServiceApp } from '@agentyard/http';
import { appDb } from '@agentyard/testing';
import { buildApp } from '../src/app.ts';
import { loadTraderConfig } from '../src/config.ts';

/** The trader service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string | undefined> = {}): Promise<ServiceApp> {
  const app = await buildApp(loadTraderConfig({ ...process.env, ...env }), { db: appDb() });
  t.teardown(() => app.close());
  return app;
}
