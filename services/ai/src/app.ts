import { createServer, databasePlugin, identityPlugin, serviceServerOptions, systemDbPlugin, type AppDeps, type ServerOptions, type ServiceApp } from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { adminEmailSet, adminNeedsVerifiedEmail } from '@agentyard/config';
import { isAdminEmail } from '@agentyard/identity';
import type { AiConfig } from './config.ts';
import { CallerLookups } from './domain/caller-lookups-system.ts';
import { ChatGateway } from './domain/chat-gateway.ts';
import { providerClients } from './domain/providers/index.ts';
import { createSpending } from './domain/spending/spending-system.ts';
import type { SpendCounters } from './domain/spending/spend-counters-system.ts';
import { UsageWriter } from './domain/usage-writer-system.ts';
import agentGatewayRoutes from './routes/agent-gateway.ts';
import aiRoutes from './routes/ai.ts';
import billingRoutes from './routes/billing.ts';
import costDashboardRoutes from './routes/cost-dashboard.ts';
import demoChatRoutes from './routes/demo-chat.ts';
import spendingRoutes from './routes/spending.ts';
import stripeWebhookRoutes from './routes/stripe-webhook.ts';
import usageReportRoutes from './routes/usage-reports.ts';

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
  await app.register(systemDbPlugin, { url: config.DATABASE_SYSTEM_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.systemDb });
  const system = app.systemDb;
  const writer = new UsageWriter(system, { flushMs: config.USAGE_FLUSH_MS, batchSize: config.USAGE_BATCH_SIZE, bufferLimit: config.USAGE_BUFFER_LIMIT, log: app.log });
  const spending = createSpending(config, system, writer, app.log);
  const gateway = new ChatGateway(providerClients(config), writer, app.log, spending.admission);
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const admins = adminEmailSet(config.ADMIN_EMAILS);
  // Change notices are listened to as the runtime role: LISTEN needs no privilege.
  // Admin, as at the edge: a listed address, verified outside development.
  const needsVerifiedEmail = adminNeedsVerifiedEmail(config.NODE_ENV);
  const isAdmin = (owner: { email: string; emailVerified: boolean }) => isAdminEmail(owner.email, admins) && (owner.emailVerified || !needsVerifiedEmail);
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

  const options = { config, system, gateway, writer, lookups };
  await app.register(aiRoutes, options);
  await app.register(demoChatRoutes, options);
  await app.register(agentGatewayRoutes, options);
  await app.register(costDashboardRoutes, { config });
  await app.register(usageReportRoutes, { system });
  await app.register(spendingRoutes, { counters: spending.counters });
  await app.register(stripeWebhookRoutes, { config, system, lookups });
  await app.register(billingRoutes, { config });
  await app.ready();
  return app;
}
