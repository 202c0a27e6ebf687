import type { ServiceApp } from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { parseKeyring } from '@agentyard/crypto';
import type { AgentsConfig } from '../../config.ts';
import { agentAccessDriver } from '../../domain/agent-workspace/agent-access.ts';
import { agentStatusEvents } from '../../domain/agent-workspace/status-events-system.ts';
import logRoutes from './logs.ts';
import fileRoutes from './files.ts';
import metricsRoutes from './metrics.ts';
import eventRoutes from './events.ts';

/** Working with a running agent: its logs, workspace files, metrics, and the user's status events. */
export default async function agentWorkspaceRoutes(app: ServiceApp, { config }: { config: AgentsConfig }) {
  const driver = agentAccessDriver(config);
  const statusEvents = agentStatusEvents(config.DATABASE_SYSTEM_URL, app.log);
  app.addHook('onClose', async () => {
    await statusEvents.close();
    await driver.close();
  });
  await app.register(logRoutes, { driver, keyring: parseKeyring(config.ENCRYPTION_KEYS) });
  await app.register(fileRoutes, { driver, activeStatuses: activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES) });
  await app.register(metricsRoutes);
  await app.register(eventRoutes, { statusEvents });
}
