import { PLANS, type Plan } from '@agentyard/db';

/** The Stripe price id of each plan ('' where not configured): the only prices the platform sells. */
export type PlanPrices = Record<Plan, string>;

export const planPricesOf = (config: {
  STRIPE_PRICE_SOLO: string;
  STRIPE_PRICE_COLLECTIVE: string;
  STRIPE_PRICE_LABEL: string;
  STRIPE_PRICE_NETWORK: string;
}): PlanPrices => ({
  solo: config.STRIPE_PRICE_SOLO,
  collective: config.STRIPE_PRICE_COLLECTIVE,
  label: config.STRIPE_PRICE_LABEL,
  network: config.STRIPE_PRICE_NETWORK,
});

/** The plan a price pays for, or null for a price that is not one of ours (no paid plan). */
export function planOfPrice(prices: PlanPrices, priceId: string | null | undefined): Plan | null {
  if (!priceId) return null;
  return PLANS.find((plan) => prices[plan] !== '' && prices[plan] === priceId) ?? null;
}

/** The configured price ids, each once. */
export const sellablePrices = (prices: PlanPrices): string[] => [...new Set(Object.values(prices).filter(Boolean))];
