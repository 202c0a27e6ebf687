import { fastifyRoute, workspaceRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { readConfig, restoreBackup, saveConfig } from '../../domain/settings/config-backups.ts';
import { planCaller } from '../../domain/agents/plan-limits.ts';
import { WorkspaceErrors } from '../../errors.ts';

/** `config` as sent: an object, or a JSON-encoded object. */
export function configFrom(value: unknown): Record<string, unknown> {
  let config = value;
  if (typeof value === 'string') {
    try {
      config = JSON.parse(value);
    } catch {
      throw WorkspaceErrors.configNotJson();
    }
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw WorkspaceErrors.invalidConfigObject();
  return config as Record<string, unknown>;
}

export default async function configRoutes(app: ServiceApp, { activeStatuses }: { activeStatuses: readonly string[] }) {
  app.route({
    ...fastifyRoute(workspaceRoutes.getConfig),
    handler: async (request) => request.asUser((trx) => readConfig(trx, planCaller(request.identity, activeStatuses))),
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.saveConfig),
    handler: async (request) => {
      const config = configFrom(request.body.config);
      const saved = await request.asUser((trx) =>
        saveConfig(trx, planCaller(request.identity, activeStatuses), config),
      );
      return { success: true as const, ...saved };
    },
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.restoreConfig),
    handler: async (request) => {
      const restored = await request.asUser((trx) =>
        restoreBackup(trx, planCaller(request.identity, activeStatuses), request.body.backupId),
      );
      return { success: true as const, ...restored };
    },
  });
}
