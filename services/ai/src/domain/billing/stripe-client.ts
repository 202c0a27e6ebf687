import Stripe from 'stripe';

export interface StripeSettings {
  STRIPE_SECRET_KEY?: string;
  STRIPE_API_BASE: string;
  STRIPE_TIMEOUT_MS: number;
}

/**
 * The official Stripe client, aimed at STRIPE_API_BASE (tests: a local server speaking the Stripe
 * API), with a deadline on every call and one retry (Stripe's idempotency keys make it safe).
 */
export function createStripeClient(settings: StripeSettings): Stripe | null {
  if (!settings.STRIPE_SECRET_KEY) return null;
  const base = new URL(settings.STRIPE_API_BASE);
  return new Stripe(settings.STRIPE_SECRET_KEY, {
    host: base.hostname,
    port: base.port || (base.protocol === 'http:' ? 80 : 443),
    protocol: base.protocol === 'http:' ? 'http' : 'https',
    timeout: settings.STRIPE_TIMEOUT_MS,
    maxNetworkRetries: 1,
    telemetry: false,
  });
}
