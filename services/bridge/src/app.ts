import {
  createServer,
  databasePlugin,
  identityPlugin,
  queuesPlugin,
  redisPlugin,
  serviceServerOptions,
  systemDbPlugin,
  type AppDeps,
  type ServerOptions,
  type ServiceApp,
} from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { adminEmailSet } from '@agentyard/config';
import { isAdminEmail } from '@agentyard/identity';
import { parseKeyring } from '@agentyard/crypto';
import type { Address } from 'viem';
import type { BridgeConfig } from './config.ts';
import { createChainClient } from './domain/chain.ts';
import { busQuota, parseDailyLimits } from './domain/bus-quota.ts';
import bridgeRoutes from './routes/bridge.ts';
import undergroundRoutes from './routes/underground.ts';
import busRoutes from './routes/bus.ts';
import webhookRoutes from './routes/webhooks.ts';
import userWalletRoutes from './routes/user-wallet.ts';

export { startWorkers } from './workers.ts';

export function serverOptions(config: BridgeConfig): ServerOptions {
  return serviceServerOptions('bridge', config);
}

/** The bridge service, ready, built as main.ts serves it: platform plugins first, then routes. */
export async function buildApp(config: BridgeConfig, deps: AppDeps = {}): Promise<ServiceApp> {
  const app = createServer({ ...serverOptions(config), logStream: deps.logStream });
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.db });
  await app.register(systemDbPlugin, {
    url: config.DATABASE_SYSTEM_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    db: deps.systemDb,
  });
  await app.register(queuesPlugin, { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX });
  // Counters only: a command that cannot reach Redis fails within the timeout instead of hanging a request.
  await app.register(redisPlugin, {
    url: config.REDIS_URL,
    options: { maxRetriesPerRequest: 1, commandTimeout: 2000 },
    purpose: 'quota',
  });
  const { systemDb: system, queues, redis } = app;
  const chain = createChainClient(config);
  const admins = adminEmailSet(config.ADMIN_EMAILS);

  await app.register(bridgeRoutes, { config });
  await app.register(undergroundRoutes, {
    keyring: parseKeyring(config.ENCRYPTION_KEYS),
    chain,
    usdc: config.USDC_CONTRACT_ADDRESS as Address,
  });
  await app.register(busRoutes, {
    bus: {
      db: system,
      chain,
      chainId: config.UNDERGROUND_CHAIN_ID,
      queues,
      maxAgeSeconds: config.BUS_MAX_AGE_SECONDS,
      quota: busQuota(redis, config.QUEUE_PREFIX, parseDailyLimits(config.BUS_DAILY_MESSAGE_LIMITS)),
      plans: {
        activeStatuses: activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES),
        isAdmin: (email) => isAdminEmail(email, admins),
      },
      routing: {
        negotiationUrl: config.NEGOTIATION_SERVICE_URL,
        amplificationUrl: config.AMPLIFICATION_SERVICE_URL,
        timeoutMs: config.BUS_ROUTING_TIMEOUT_MS,
      },
    },
  });
  await app.register(webhookRoutes, { config });
  const walletChain = {
    client: chain,
    chainId: config.UNDERGROUND_CHAIN_ID,
    usdc: config.USDC_CONTRACT_ADDRESS as Address,
    nativeSymbol: config.WALLET_NATIVE_SYMBOL,
    lookbackBlocks: config.WALLET_TRANSFER_LOOKBACK_BLOCKS,
  };
  await app.register(userWalletRoutes, { chain: walletChain, cacheMs: config.WALLET_CACHE_MS });
  await app.ready();
  return app;
}
