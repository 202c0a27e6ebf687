import type { Test } from 'tap';
import { createServer, type ServiceApp } from '@agentyard/http';
import { appDb, systemDb } from '@agentyard/testing';
import bridgeApp from '../src/app.ts';
import { loadBridgeConfig, type BridgeConfig } from '../src/config.ts';

/** The bridge service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(t: Test, env: Record<string, string | undefined> = {}): Promise<{ app: ServiceApp; config: BridgeConfig }> {
  const config = loadBridgeConfig({ ...process.env, ...env });
  const app = createServer({ name: 'bridge', logLevel: 'silent' });
  await app.register(bridgeApp, { config, db: appDb(), systemDb: systemDb() });
  await app.ready();
  t.teardown(() => app.close());
  return { app, config };
}
