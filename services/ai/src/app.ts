import {
  createServer,
  databasePlugin,
  identityPlugin,
  queuesPlugin,
  serviceServerOptions,
  systemDbPlugin,
  type AppDeps,
  type ServerOptions,
  type ServiceApp,
} from '@agentyard/http';
import { agentActivity, redisConnection } from '@agentyard/queue';
import { activeStatusesOf } from '@agentyard/db';
import { adminEmailSet, adminNeedsVerifiedEmail } from '@agentyard/config';
import { isAdminEmail } from '@agentyard/identity';
import type { AiConfig } from './config.ts';
import { CallerLookups } from './domain/privileged/caller-lookups.ts';
import { ChatGateway } from './domain/chat-gateway.ts';
import { messagesWire } from './domain/messages-wire.ts';
import { PassThroughGateway } from './domain/pass-through-gateway.ts';
import { passThroughOf, passThroughWithKey, providerClient, providerClients } from './domain/providers/index.ts';
import { embeddingsWire, responsesWire } from './domain/responses-wire.ts';
import { createSpending } from './domain/spending/privileged/spending.ts';
import type { SpendCounters } from './domain/spending/privileged/spend-counters.ts';
import { UsageWriter } from './domain/privileged/usage-writer.ts';
import agentGatewayRoutes from './routes/agent-gateway.ts';
import aiRoutes from './routes/privileged/ai.ts';
import billingRoutes from './routes/privileged/billing.ts';
import costDashboardRoutes from './routes/cost-dashboard.ts';
import usageCallRoutes from './routes/usage-calls.ts';
import fleetCostRoutes from './routes/fleet-costs.ts';
import demoChatRoutes from './routes/demo-chat.ts';
import spendingRoutes from './routes/spending.ts';
import minuteLimitRoutes from './routes/minute-limits.ts';
import providerKeyRoutes from './routes/provider-keys.ts';
import { parseKeyring } from '@agentyard/crypto';
import { MinuteWindows } from './domain/limits/minute-windows.ts';
import stripeWebhookRoutes from './routes/privileged/stripe-webhook.ts';
import usageReportRoutes from './routes/privileged/usage-reports.ts';
import gatewayRoutingRoutes from './routes/gateway-routing.ts';
import summarizerRoutes from './routes/summarizer.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The buffered usage writer (tests flush it to assert rows). */
    usageWriter: UsageWriter;
    /** The subscription and agent-key lookups of the chat path (tests await their change notices). */
    callerLookups: CallerLookups;
    /** Month spend and reservations in Redis (tests look at them). */
    spendCounters: SpendCounters;
  }
}

export function serverOptions(config: AiConfig): ServerOptions {
  return serviceServerOptions('ai', config);
}

/** The AI gateway, ready, built as main.ts serves it: platform plugins first, then routes. */
export async function buildApp(config: AiConfig, deps: AppDeps = {}): Promise<ServiceApp> {
  const app = createServer({ ...serverOptions(config), logStream: deps.logStream });
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.db });
  await app.register(systemDbPlugin, {
    url: config.DATABASE_SYSTEM_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    db: deps.systemDb,
  });
  // Plan changes ask the agents worker to stop what a plan no longer covers.
  await app.register(queuesPlugin, { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX });
  const system = app.systemDb;
  const writer = new UsageWriter(system, {
    flushMs: config.USAGE_FLUSH_MS,
    batchSize: config.USAGE_BATCH_SIZE,
    bufferLimit: config.USAGE_BUFFER_LIMIT,
    log: app.log,
  });
  const spending = createSpending(config, system, writer, app.log);
  const retry = {
    retries: config.PROVIDER_RETRIES,
    baseMs: config.PROVIDER_RETRY_BASE_MS,
    deadlineMs: config.PROVIDER_RETRY_DEADLINE_MS,
  };
  // Users' own provider keys (BYOK) are sealed with the platform keyring.
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const gateway = new ChatGateway(
    providerClients(config),
    writer,
    app.log,
    spending.admission,
    retry,
    (provider, apiKey) => providerClient(config, provider, apiKey),
  );
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const admins = adminEmailSet(config.ADMIN_EMAILS);
  // Change notices are listened to as the runtime role: LISTEN needs no privilege.
  // Admin, as at the edge: a listed address, verified outside development.
  const needsVerifiedEmail = adminNeedsVerifiedEmail(config.NODE_ENV);
  const isAdmin = (owner: { email: string; emailVerified: boolean }) =>
    isAdminEmail(owner.email, admins) && (owner.emailVerified || !needsVerifiedEmail);
  const lookups = new CallerLookups(system, config.DATABASE_URL, activeStatuses, isAdmin, app.log);
  app.decorate('usageWriter', writer);
  app.decorate('callerLookups', lookups);
  app.decorate('spendCounters', spending.counters);
  spending.follow(lookups);
  app.addHook('onClose', async () => {
    await lookups.close();
    await writer.close();
    await spending.close();
  });

  // An agent calling a model is in a turn: its calls keep it from hibernating (the agents worker reads this).
  const activityRedis = redisConnection(
    config.REDIS_URL,
    { maxRetriesPerRequest: 1, commandTimeout: 1000 },
    { purpose: 'agent activity', log: app.log, level: 'warn' },
  );
  const activity = agentActivity(activityRedis, {
    prefix: config.QUEUE_PREFIX,
    everyMs: config.HIBERNATE_ACTIVITY_EVERY_MS,
    log: app.log,
  });
  app.addHook('onClose', async () => activityRedis.disconnect());
  const options = { config, system, gateway, writer, lookups };
  await app.register(aiRoutes, options);
  await app.register(demoChatRoutes, options);
  const wires = {
    messages: new PassThroughGateway(
      passThroughOf(config, 'anthropic', 'messages'),
      messagesWire,
      gateway,
      app.log,
      passThroughWithKey(config, 'anthropic', 'messages'),
    ),
    responses: new PassThroughGateway(
      passThroughOf(config, 'openai', 'responses'),
      responsesWire(config.DEFAULT_MAX_TOKENS),
      gateway,
      app.log,
      passThroughWithKey(config, 'openai', 'responses'),
    ),
    embeddings: new PassThroughGateway(
      passThroughOf(config, 'openai', 'embeddings'),
      embeddingsWire,
      gateway,
      app.log,
      passThroughWithKey(config, 'openai', 'embeddings'),
    ),
  };
  // Agents' and user keys' requests and tokens per minute, shared by every gateway process.
  const limitsRedis = redisConnection(
    config.REDIS_URL,
    { maxRetriesPerRequest: 1, commandTimeout: 1000 },
    { purpose: 'minute limits', log: app.log, level: 'warn' },
  );
  app.addHook('onClose', async () => limitsRedis.disconnect());
  const minuteWindows = new MinuteWindows(limitsRedis, config.QUEUE_PREFIX, app.log);
  // /v1/models, /v1/chat/completions, /v1/messages, /v1/responses, /v1/embeddings: agents' own keys
  await app.register(agentGatewayRoutes, { ...options, wires, activity, minuteWindows, keyring });
  await app.register(minuteLimitRoutes, { activeStatuses });
  await app.register(providerKeyRoutes, { keyring });
  await app.register(costDashboardRoutes, { config });
  await app.register(usageCallRoutes);
  await app.register(fleetCostRoutes, { config }); // /api/mission-control/fleet/costs
  await app.register(usageReportRoutes, { system });
  await app.register(spendingRoutes, { counters: spending.counters });
  await app.register(stripeWebhookRoutes, { config, system, lookups, queues: app.queues });
  await app.register(billingRoutes, { config, system, queues: app.queues });
  await app.register(gatewayRoutingRoutes, options);
  await app.register(summarizerRoutes, options);
  await app.ready();
  return app;
}
