import type { Test } from 'tap';
import type { ServiceApp } from '@agentyard/http';
import { appDb, systemDb } from '@agentyard/testing';
import { buildApp } from '../src/app.ts';
import { loadBridgeConfig, type BridgeConfig } from '../src/config.ts';

/** The bridge service exactly as main.ts builds it, on this run's database, closed when `t` ends. */
export async function build(
  t: Test,
  env: Record<string, string | undefined> = {},
): Promise<{ app: ServiceApp; config: BridgeConfig }> {
  const config = loadBridgeConfig({ ...process.env, ...env });
  const app = await buildApp(config, { db: appDb(), systemDb: systemDb() });
  t.teardown(() => app.close());
  return { app, config };
}
