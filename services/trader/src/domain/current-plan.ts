import type { UserTx } from '@agentyard/db';

/** An active subscription, by the payment provider's statuses. */
const isActive = (status: string) => status === 'active' || status === 'trialing';

/**
 * The plan the user pays for now: their newest active subscription's, read as the agents service
 * reads it (services/agents/src/domain/agents/plan-limits.ts); null without one. The one place
 * the trader asks, so the platform's shared "current plan" function can take its place.
 */
export async function currentPlanOf(trx: UserTx): Promise<string | null> {
  const subscriptions = await trx.selectFrom('subscriptions').select(['status', 'plan']).orderBy('updated_at', 'desc').execute();
  return subscriptions.find((s) => isActive(s.status))?.plan ?? null;
}
