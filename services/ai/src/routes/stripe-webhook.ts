import Stripe from 'stripe';
import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import type { SystemDb } from '@agentyard/db/system';
import type { AiConfig } from '../config.ts';
import { AiErrors } from '../errors.ts';
import type { CallerLookups } from '../domain/caller-lookups-system.ts';
import { applyStripeEvent } from '../domain/subscriptions-system.ts';

/** Stripe webhooks: the signature is verified over the raw body, so this route keeps it unparsed. */
export default async function stripeWebhookRoutes(app: ServiceApp, { config, system, lookups }: { config: AiConfig; system: SystemDb; lookups: CallerLookups }) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.route({
    ...fastifyRoute(aiRoutes.stripeWebhook),
    handler: async (request) => {
      if (!config.STRIPE_WEBHOOK_SECRET) throw AiErrors.webhookNotConfigured();
      const signature = request.headers['stripe-signature'];
      if (typeof signature !== 'string' || !Buffer.isBuffer(request.body)) throw AiErrors.badSignature();
      let event: Stripe.Event;
      try {
        event = Stripe.webhooks.constructEvent(request.body, signature, config.STRIPE_WEBHOOK_SECRET);
      } catch {
        throw AiErrors.badSignature();
      }
      const { duplicate, subscriptionId } = await applyStripeEvent(system, event);
      if (subscriptionId) lookups.subscriptionChanged(subscriptionId);
      request.log.info({ stripeEvent: event.id, type: event.type, duplicate }, 'stripe event');
      return { received: true as const, duplicate };
    },
  });
}
