import { fastifyRoute, workspaceRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { actOnDevice, listDevices } from '../../domain/workspace/devices.ts';

export default async function deviceRoutes(app: ServiceApp) {
  app.route({
    ...fastifyRoute(workspaceRoutes.listDevices),
    handler: async (request) => request.asUser((trx) => listDevices(trx)),
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.actOnDevice),
    handler: async (request) => {
      const lists = await request.asUser((trx) => actOnDevice(trx, request.body.deviceId, request.body.action));
      return { success: true as const, ...lists };
    },
  });
}
