import { createServer, databasePlugin, identityPlugin, serviceServerOptions, type AppDeps, type ServerOptions, type ServiceApp } from '@agentyard/http';
import type { AgentsConfig } from './config.ts';
import workspaceRoutes from './routes/workspace/index.ts';
import agentRoutes from './routes/agents/index.ts';
import agentWorkspaceRoutes from './routes/agent-workspace/index.ts';

export { startWorkers } from './domain/agents/workers.ts';

export function serverOptions(config: AgentsConfig): ServerOptions {
  return serviceServerOptions('agents', config);
}

/** The agents service, ready, built as main.ts serves it: platform plugins first, then each area's routes. */
export async function buildApp(config: AgentsConfig, deps: AppDeps = {}): Promise<ServiceApp> {
  const app = createServer({ ...serverOptions(config), logStream: deps.logStream });
  await app.register(identityPlugin, { secret: config.IDENTITY_SECRET });
  await app.register(databasePlugin, { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, db: deps.db });
  await app.register(workspaceRoutes, { config });
  await app.register(agentRoutes, { config });
  await app.register(agentWorkspaceRoutes, { config });
  await app.ready();
  return app;
}
