import { parseKeyring } from '@agentyard/crypto';
import { activeStatusesOf } from '@agentyard/db';
import {
  createServer,
  databasePlugin,
  identityPlugin,
  serviceServerOptions,
  type AppDeps,
  type ServerOptions,
  type ServiceApp,
} from '@agentyard/http';
import { createQueues } from '@agentyard/queue';
import type { AgentsConfig } from './config.ts';
import { agentAccessDriver } from './domain/runtime/agent-access.ts';
import { createRuntimeContext } from './domain/runtime/privileged/runtime-context.ts';
import { agentStatusEvents } from './domain/telemetry/status-events.ts';
import agentConfigRoutes from './routes/agents/agent-config.ts';
import channelRoutes from './routes/agents/channels.ts';
import agentWorkRoutes from './routes/agents/chat-memory-skills.ts';
import type { AgentRouteDeps } from './routes/agents/deps.ts';
import gatewayProxyRoutes from './routes/agents/gateway-proxies.ts';
import instanceRoutes from './routes/agents/instance.ts';
import lifecycleRoutes from './routes/agents/lifecycle.ts';
import messageRoutes from './routes/agents/messages.ts';
import provisioningRoutes from './routes/agents/provisioning.ts';
import agentRecordRoutes from './routes/agents/records.ts';
import runtimeRoutes from './routes/agents/runtime.ts';
import snapshotRoutes from './routes/agents/snapshots.ts';
import verificationRoutes from './routes/agents/verification.ts';
import configRoutes from './routes/settings/config.ts';
import dashboardStatsRoutes from './routes/settings/dashboard-stats.ts';
import deviceRoutes from './routes/settings/devices.ts';
import installationRoutes from './routes/settings/installations.ts';
import swarmRoutes from './routes/settings/swarms.ts';
import workflowRoutes from './routes/settings/workflows.ts';
import eventRoutes from './routes/telemetry/events.ts';
import agentEventRoutes from './routes/telemetry/agent-events.ts';
import fleetRoutes from './routes/telemetry/fleet.ts';
import logRoutes from './routes/telemetry/logs.ts';
import metricsRoutes from './routes/telemetry/metrics.ts';
import fileRoutes from './routes/workspace/files.ts';

export { startWorkers } from './workers.ts';

export function serverOptions(config: AgentsConfig): ServerOptions {
  return serviceServerOptions('agents', config);
}

/**
 * The agents service, ready, built as main.ts serves it: platform plugins first, then every route
 * group, so its URL space reads from here. What routes share is opened here, closed with the app:
 * the runtime context (container work, on the system connection), the queues, the container
 * driver and the status events' LISTEN connection.
 */
export async function buildApp(config: AgentsConfig, deps: AppDeps = {}): Promise<ServiceApp> {
  const app = createServer({ ...serverOptions(config), logStream: deps.logStream });
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.db });
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  const keyring = parseKeyring(config.ENCRYPTION_KEYS);
  const context = createRuntimeContext(config, app.log);
  const queues = createQueues({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log: app.log });
  const driver = agentAccessDriver(config);
  const statusEvents = agentStatusEvents(config.DATABASE_SYSTEM_URL, app.log);
  app.addHook('onClose', async () => {
    await statusEvents.close();
    await driver.close();
    await queues.close();
    await context.close();
  });
  const agents: AgentRouteDeps = { config, context, queues };

  // The user's settings.
  await app.register(configRoutes, { activeStatuses }); // /api/config
  await app.register(deviceRoutes, { keyring, timeoutMs: config.AGENT_GATEWAY_READ_TIMEOUT_MS }); // /api/devices
  await app.register(workflowRoutes, { workflowsPerUser: config.WORKFLOWS_PER_USER_MAX }); // /api/workflows
  await app.register(dashboardStatsRoutes, { activeStatuses }); // /api/dashboard/stats
  await app.register(installationRoutes, {
    keyring,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    offlineAfterMs: config.INSTALLATION_OFFLINE_AFTER_SECONDS * 1000,
  }); // /api/register-{home,link}, /api/installations, /install, /link

  await app.register(swarmRoutes, { queues, subscriptionActiveStatuses: config.SUBSCRIPTION_ACTIVE_STATUSES }); // /api/swarms[/:id[/runs[/:runId]]]

  // Agents, provisioning, lifecycle and the runtime, on both surfaces.
  await app.register(agentRecordRoutes, agents); // /api/agents, /api/agents/:id, /api/agents/:id/token
  await app.register(provisioningRoutes, agents); // /api/agents/provision, /api/user/runtime, /api/agents/clone
  await app.register(lifecycleRoutes, agents); // /api/agents/:id/{start,stop,restart,update,repair,reset-memory} (web: queued, 202)
  await app.register(runtimeRoutes, agents); // /api/agents/:id/stats; backend: /api/deployments, /api/runtime/*
  await app.register(instanceRoutes, agents); // /api/instance/:userId, /api/provision
  await app.register(messageRoutes, agents); // /api/agents/:id/messages
  await app.register(verificationRoutes, agents); // /api/agents/:id/verify; backend: /api/agents/:id/verification
  await app.register(agentConfigRoutes, agents); // /api/agents/:id/config
  await app.register(channelRoutes, agents); // /api/agents/:id/channels[/:channel]
  await app.register(agentWorkRoutes, agents); // /api/chat, /api/gateway/chat, /api/memory, /api/skills
  await app.register(gatewayProxyRoutes, agents); // /api/control-ui/:agentId; backend: /api/runtime/proxy/:agentId
  await app.register(snapshotRoutes, agents); // /api/agents/:id/snapshots[/:snapshotId[/download]], /api/agents/:id/restore

  // A running agent's logs, files and metrics, and the user's status events.
  await app.register(logRoutes, { driver, keyring, hibernation: context.hibernation }); // /api/logs/:agentId/{history,stream}
  await app.register(fileRoutes, {
    driver,
    admission: context.workspaces,
    activeStatuses,
    activity: context.hibernation,
  }); // /api/files
  await app.register(metricsRoutes); // /api/metrics
  await app.register(eventRoutes, { statusEvents }); // /api/events
  await app.register(agentEventRoutes); // /api/agents/:id/events
  await app.register(fleetRoutes); // /api/mission-control/fleet/{graph,traces}, /api/colony/status
  await app.ready();
  return app;
}
