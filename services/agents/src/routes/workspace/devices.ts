import { fastifyRoute, workspaceRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { Keyring } from '@agentyard/crypto';
import { actOnDevice, listDevices, type DeviceAccess } from '../../domain/workspace/devices.ts';
import { WorkspaceErrors } from '../../domain/workspace/errors.ts';
import { bodyErrors, isMissing } from './body-errors.ts';

/** The user's paired devices: the pairing state of their running agents' gateways. `auth: 'user'`: the identity has a user id. */
export default async function deviceRoutes(app: ServiceApp, { keyring, timeoutMs }: { keyring: Keyring; timeoutMs: number }) {
  const access: DeviceAccess = { keyring, timeoutMs, warn: (message, agentId) => app.log.warn({ agentId }, message) };

  app.route({
    ...fastifyRoute(workspaceRoutes.listDevices),
    handler: async (request) => listDevices(request, access),
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.actOnDevice),
    errorHandler: bodyErrors((v) => {
      if (isMissing(v)) return WorkspaceErrors.missingDeviceFields();
      if (v.instancePath === '/action') return WorkspaceErrors.invalidDeviceAction();
      return undefined;
    }),
    handler: async (request) => {
      const lists = await actOnDevice(request, request.identity.userId as string, request.body.deviceId, request.body.action, access);
      return { success: true as const, ...lists };
    },
  });
}
