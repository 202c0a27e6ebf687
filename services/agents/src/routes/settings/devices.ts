import { fastifyRoute, workspaceRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { Keyring } from '@agentyard/crypto';
import { actOnDevice, listDevices, type DeviceAccess } from '../../domain/settings/devices.ts';

/** The user's paired devices: the pairing state of their running agents' gateways. `auth: 'user'`: the identity has a user id. */
export default async function deviceRoutes(
  app: ServiceApp,
  { keyring, timeoutMs }: { keyring: Keyring; timeoutMs: number },
) {
  const access: DeviceAccess = { keyring, timeoutMs, warn: (message, agentId) => app.log.warn({ agentId }, message) };

  app.route({
    ...fastifyRoute(workspaceRoutes.listDevices),
    handler: async (request) => listDevices(request, access, request.query.agentId),
  });

  // The interface's devices family for one agent: the same answer as GET /api/devices?agentId=.
  app.route({
    ...fastifyRoute(workspaceRoutes.openclawDevices),
    handler: async (request) => listDevices(request, access, request.query.agentId),
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.actOnDevice),
    handler: async (request) => {
      const lists = await actOnDevice(
        request,
        request.identity.userId as string,
        request.body.deviceId,
        request.body.action,
        access,
      );
      return { success: true as const, ...lists };
    },
  });
}
