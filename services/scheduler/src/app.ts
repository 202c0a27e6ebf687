import type { ServiceApp } from '@agentyard/http';
import { databasePlugin, identityPlugin } from '@agentyard/http';
import { activeStatusesOf, type AppDb } from '@agentyard/db';
import { createQueues, QUEUES } from '@agentyard/queue';
import { deliveryPolicy, type SchedulerConfig } from './config.ts';
import { parseMinIntervals } from './domain/firing-limits.ts';
import heartbeatRoutes from './routes/heartbeats.ts';
import scheduledTaskRoutes from './routes/scheduled-tasks.ts';

export interface SchedulerAppOptions {
  config: SchedulerConfig;
  /** A shared pool, for tests that build many apps. */
  db?: AppDb;
}

/** The scheduler service as a plugin: platform plugins first, then routes. */
export default async function schedulerApp(app: ServiceApp, { config, db }: SchedulerAppOptions) {
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db });
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log: app.log });
  app.addHook('onClose', () => queues.close());
  const policy = deliveryPolicy(config);
  const limits = { tasksPerUser: config.SCHEDULED_TASKS_PER_USER_MAX, minIntervalSeconds: parseMinIntervals(config.SCHEDULER_MIN_INTERVAL_SECONDS), activeStatuses: activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES) };
  await app.register(scheduledTaskRoutes, { timers: { queue: queues.get(QUEUES.scheduledPrompts), policy }, limits });
  await app.register(heartbeatRoutes, { timers: { queue: queues.get(QUEUES.heartbeats), policy }, limits });
}
