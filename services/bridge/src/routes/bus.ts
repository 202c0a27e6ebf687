import { fastifyRoute, undergroundRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { sendBusMessage, type BusContext } from '../domain/privileged/bus.ts';

/** Bus send: authenticated by the message signature alone, served on the system connection. */
export default async function busRoutesPlugin(app: ServiceApp, { bus }: { bus: BusContext }) {
  app.route({
    ...fastifyRoute(undergroundRoutes.busSend),
    handler: async (request) => sendBusMessage(bus, request.body),
  });
}
