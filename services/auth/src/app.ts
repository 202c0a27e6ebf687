import fastifyCookie from '@fastify/cookie';
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
import { parseKeyring } from '@agentyard/crypto';
import type { QueueSet } from '@agentyard/queue';
import type { AuthConfig } from './config.ts';
import { SecurityEventVerifier } from './domain/security-events.ts';
import { SignInThrottle } from './domain/sign-in-throttle.ts';
import { Revocations } from './domain/revocations.ts';
import accountRoutes from './routes/accounts.ts';
import settingsRoutes from './routes/settings.ts';
import keyRoutes from './routes/keys.ts';
import inviteRoutes from './routes/privileged/invites.ts';
import oauthRoutes from './routes/oauth.ts';
import securityEventRoutes from './routes/privileged/security-events.ts';
import passwordRoutes from './routes/passwords.ts';
import walletRoutes from './routes/wallet.ts';
import farcasterRoutes from './routes/farcaster.ts';
import emailWebhookRoutes from './routes/privileged/email-webhooks.ts';

export { startWorkers } from './workers.ts';

export interface AuthDeps extends AppDeps {
  queues?: QueueSet;
}

export function serverOptions(config: AuthConfig): ServerOptions {
  return serviceServerOptions('auth', config);
}

/** The auth service, ready, built as main.ts serves it: platform plugins first, then routes. */
export async function buildApp(config: AuthConfig, deps: AuthDeps = {}): Promise<ServiceApp> {
  const app = createServer({ ...serverOptions(config), logStream: deps.logStream });
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(fastifyCookie); // sets the session and OAuth binding cookies; reads the binding the edge forwards
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.db });
  await app.register(systemDbPlugin, {
    url: config.DATABASE_SYSTEM_URL,
    poolSize: 4,
    applicationName: 'auth-system',
    db: deps.systemDb,
  });
  await app.register(queuesPlugin, { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, queues: deps.queues });
  // Sign-in counts per account and client network; fails fast (offline queue off, 1 s) so a Redis outage never holds a sign-in.
  await app.register(redisPlugin, {
    url: config.REDIS_URL,
    options: { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000 },
    purpose: 'sign-in throttle',
    errorLevel: 'warn',
  });
  const { systemDb: system, queues: queueSet } = app;
  const throttle = new SignInThrottle(
    app.redis,
    config.QUEUE_PREFIX,
    (err) => app.log.warn({ err: { message: err.message } }, 'sign-in throttle unavailable: attempt let through'),
    {
      freeFailures: config.SIGN_IN_FREE_FAILURES,
      firstDelayMs: config.SIGN_IN_FIRST_DELAY_SECONDS * 1000,
      maxDelayMs: config.SIGN_IN_MAX_DELAY_SECONDS * 1000,
      forgetAfterMs: config.SIGN_IN_FORGET_SECONDS * 1000,
    },
  );
  const verifier = new SecurityEventVerifier({
    configurationUrl: config.GOOGLE_RISC_CONFIGURATION_URL,
    audiences: [config.GOOGLE_CLIENT_ID, ...config.GOOGLE_RISC_AUDIENCES.split(',')]
      .map((id) => id?.trim())
      .filter((id): id is string => !!id),
    timeoutMs: config.OAUTH_TIMEOUT_MS,
    keySetCooldownMs: config.RISC_KEY_SET_COOLDOWN_MS,
  });

  const revocations = new Revocations(app.redis, config.QUEUE_PREFIX, app.log);
  await app.register(accountRoutes, { config, queues: queueSet, throttle, revocations });
  await app.register(settingsRoutes, { config, throttle, revocations });
  await app.register(keyRoutes, { config, revocations });
  await app.register(inviteRoutes, { config, keyring, systemDb: system });
  await app.register(oauthRoutes, { config, keyring });
  await app.register(securityEventRoutes, { verifier, systemDb: system, queues: queueSet });
  await app.register(passwordRoutes, { config, queues: queueSet, throttle, revocations });
  await app.register(walletRoutes, { config, keyring });
  await app.register(farcasterRoutes, { config });
  await app.register(emailWebhookRoutes, { config, systemDb: system });
  await app.ready();
  return app;
}
