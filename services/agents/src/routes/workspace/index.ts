import type { ServiceApp } from '@agentyard/http';
import { activeStatusesOf } from '@agentyard/db';
import { parseKeyring } from '@agentyard/crypto';
import type { AgentsConfig } from '../../config.ts';
import configRoutes from './config.ts';
import dashboardStatsRoutes from './dashboard-stats.ts';
import deviceRoutes from './devices.ts';
import workflowRoutes from './workflows.ts';

/** The user's workspace: agent configuration and backups, paired devices, workflows, dashboard stats. */
export default async function workspaceRoutes(app: ServiceApp, { config }: { config: AgentsConfig }) {
  const activeStatuses = activeStatusesOf(config.SUBSCRIPTION_ACTIVE_STATUSES);
  await app.register(configRoutes, { activeStatuses });
  await app.register(deviceRoutes, { keyring: parseKeyring(config.ENCRYPTION_KEYS), timeoutMs: config.AGENT_GATEWAY_READ_TIMEOUT_MS });
  await app.register(workflowRoutes, { workflowsPerUser: config.WORKFLOWS_PER_USER_MAX });
  await app.register(dashboardStatsRoutes, { activeStatuses });
}
