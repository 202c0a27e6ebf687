import type { ServiceApp } from '@agentyard/http';
import { databasePlugin, identityPlugin } from '@agentyard/http';
import type { AppDb } from '@agentyard/db';
import { parseKeyring } from '@agentyard/crypto';
import type { TraderConfig } from './config.ts';
import traderRoutes from './routes/trader.ts';

export interface TraderAppOptions {
  config: TraderConfig;
  /** A shared pool, for tests that build many apps. */
  db?: AppDb;
}

/** The trader relay as a plugin: platform plugins first, then routes. */
export default async function traderApp(app: ServiceApp, { config, db }: TraderAppOptions) {
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db });
  await app.register(traderRoutes, { config, keyring: parseKeyring(config.ENCRYPTION_KEYS) });
}
