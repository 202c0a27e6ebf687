import { fastifyRoute, webhookRoutes } from '@agentyard/proto-schemas';
import { parseJsonText, type ServiceApp } from '@agentyard/http';
import type { FastifyRequest } from 'fastify';
import type { BridgeConfig } from '../config.ts';
import { BridgeErrors } from '../errors.ts';
import { hostingStatusFeed, storeWebhookEvent, verifyWebhookSignature } from '../domain/webhooks.ts';

declare module 'fastify' {
  interface FastifyRequest {
    signedBody?: Buffer;
  }
}

/** Webhook routes keep the exact bytes they were signed over; this plugin's JSON parser keeps them. */
export default async function webhookRoutesPlugin(app: ServiceApp, { config }: { config: BridgeConfig }) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, body: Buffer, done) => {
    request.signedBody = body;
    try {
      done(null, parseJsonText(body.toString('utf8')));
    } catch (error) {
      done(error as Error);
    }
  });

  const verified = (request: FastifyRequest, secret: string | undefined) => {
    if (!secret) throw BridgeErrors.webhookNotConfigured();
    const header = request.headers['x-webhook-signature'];
    verifyWebhookSignature(
      typeof header === 'string' ? header : undefined,
      request.signedBody ?? Buffer.alloc(0),
      secret,
      config.WEBHOOK_TOLERANCE_SECONDS,
    );
  };

  app.route({
    ...fastifyRoute(webhookRoutes.livestream),
    handler: async (request) => {
      verified(request, config.LIVESTREAM_WEBHOOK_SECRET);
      return storeWebhookEvent(app.db, 'livestream', request.body);
    },
  });

  app.route({
    ...fastifyRoute(webhookRoutes.hostingStatus),
    handler: async (request) => {
      verified(request, config.HOSTING_STATUS_WEBHOOK_SECRET);
      return storeWebhookEvent(app.db, 'hosting-status', request.body);
    },
  });

  app.route({
    ...fastifyRoute(webhookRoutes.hostingStatusFeed),
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      return hostingStatusFeed(app.db, { limit, cursor });
    },
  });
}
