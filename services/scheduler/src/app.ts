import {
  createServer,
  databasePlugin,
  identityPlugin,
  queuesPlugin,
  serviceServerOptions,
  type AppDeps,
  type ServerOptions,
  type ServiceApp,
} from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { QUEUES } from '@agentyard/queue';
import { deliveryPolicy, type SchedulerConfig } from './config.ts';
import { parseMinIntervals } from './domain/firing-limits.ts';
import heartbeatRoutes from './routes/heartbeats.ts';
import scheduledTaskRoutes from './routes/scheduled-tasks.ts';

export { startWorkers } from './workers.ts';

export function serverOptions(config: SchedulerConfig): ServerOptions {
  return serviceServerOptions('scheduler', config);
}

/** The scheduler service, ready, built as main.ts serves it: platform plugins first, then routes. */
export async function buildApp(config: SchedulerConfig, deps: AppDeps = {}): Promise<ServiceApp> {
  const app = createServer({ ...serverOptions(config), logStream: deps.logStream });
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.db });
  await app.register(queuesPlugin, { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX });
  const { queues } = app;
  const policy = deliveryPolicy(config);
  const limits = {
    tasksPerUser: config.SCHEDULED_TASKS_PER_USER_MAX,
    minIntervalSeconds: parseMinIntervals(config.SCHEDULER_MIN_INTERVAL_SECONDS),
    activeStatuses: activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES),
  };
  await app.register(scheduledTaskRoutes, { timers: { queue: queues.get(QUEUES.scheduledPrompts), policy }, limits });
  await app.register(heartbeatRoutes, { timers: { queue: queues.get(QUEUES.heartbeats), policy }, limits });
  await app.ready();
  return app;
}
