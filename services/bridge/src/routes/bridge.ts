import { bridgeRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { BridgeConfig } from '../config.ts';
import { allowedSenders, bridgeHealth, readInbox, sendBridgeMessage } from '../domain/bridge-messages.ts';

export default async function bridgeRoutesPlugin(app: ServiceApp, { config }: { config: BridgeConfig }) {
  const senders = allowedSenders(config.BRIDGE_OPERATOR_IDENTITY);

  app.route({
    ...fastifyRoute(bridgeRoutes.send),
    handler: async (request) => ({
      ok: true as const,
      message: await sendBridgeMessage(app.db, senders, request.body),
    }),
  });

  app.route({
    ...fastifyRoute(bridgeRoutes.inbox),
    handler: async (request) => readInbox(app.db, request.query),
  });

  app.route({
    ...fastifyRoute(bridgeRoutes.health),
    handler: async (request, reply) => {
      try {
        return await bridgeHealth(app.db, senders);
      } catch (error) {
        request.log.error({ err: error }, 'bridge health failed');
        return reply.code(500).send({ status: 'error' as const, error: 'Bridge database unavailable' });
      }
    },
  });
}
