import type { ServiceApp } from '@agentyard/http';
import { databasePlugin, identityPlugin } from '@agentyard/http';
import type { AppDb } from '@agentyard/db';
import type { AgentsConfig } from './config.ts';
import workspaceRoutes from './routes/workspace/index.ts';
import agentRoutes from './routes/agents/index.ts';
import agentWorkspaceRoutes from './routes/agent-workspace/index.ts';

export interface AgentsAppOptions {
  config: AgentsConfig;
  /** A shared pool, for tests that build many apps. */
  db?: AppDb;
}

/** The agents service as a plugin: platform plugins first, then each area's routes. */
export default async function agentsApp(app: ServiceApp, { config, db }: AgentsAppOptions) {
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db });
  await app.register(workspaceRoutes, { config });
  await app.register(agentRoutes, { config });
  await app.register(agentWorkspaceRoutes, { config });
}
