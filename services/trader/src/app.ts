import {
  createServer,
  databasePlugin,
  identityPlugin,
  serviceServerOptions,
  type AppDeps,
  type ServerOptions,
  type ServiceApp,
} from '@agentyard/http';
import { parseKeyring } from '@agentyard/crypto';
import type { TraderConfig } from './config.ts';
import traderRoutes from './routes/trader.ts';

export function serverOptions(config: TraderConfig): ServerOptions {
  return serviceServerOptions('trader', config);
}

/** The trader relay, ready, built as main.ts serves it: platform plugins first, then routes. */
export async function buildApp(config: TraderConfig, deps: AppDeps = {}): Promise<ServiceApp> {
  const app = createServer({ ...serverOptions(config), logStream: deps.logStream });
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.db });
  await app.register(traderRoutes, { config, keyring: parseKeyring(config.ENCRYPTION_KEYS) });
  await app.ready();
  return app;
}
