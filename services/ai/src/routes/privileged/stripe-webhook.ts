import Stripe from 'stripe';
import type { ServiceApp } from '@agentyard/http';
import { aiRoutes, fastifyRoute } from '@agentyard/proto-schemas';
import type { SystemDb } from '@agentyard/db/system';
import type { AiConfig } from '../../config.ts';
import { AiErrors } from '../../errors.ts';
import type { CallerLookups } from '../../domain/privileged/caller-lookups.ts';
import type { QueueSet } from '@agentyard/queue';
import { planMayHaveChanged } from '../../domain/billing/plan-changes.ts';
import { planPricesOf } from '../../domain/billing/plan-prices.ts';
import { applyStripeEvent, subscriptionById } from '../../domain/privileged/subscriptions.ts';

/** Stripe webhooks: the signature is verified over the raw body, so this route keeps it unparsed. */
export default async function stripeWebhookRoutes(
  app: ServiceApp,
  { config, system, lookups, queues }: { config: AiConfig; system: SystemDb; lookups: CallerLookups; queues: QueueSet },
) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const context = { prices: planPricesOf(config), log: app.log };

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
      const { duplicate, subscriptionId, touched } = await applyStripeEvent(system, event, context);
      if (subscriptionId) lookups.subscriptionChanged(subscriptionId);
      // Not queued: the error answers 500 and Stripe delivers the event again, which queues it then.
      const owner = touched ? (await subscriptionById(system, touched))?.userId : null;
      if (owner) await planMayHaveChanged(queues, owner);
      request.log.info({ stripeEvent: event.id, type: event.type, duplicate }, 'stripe event');
      return { received: true as const, duplicate };
    },
  });
}
