import { currentPlan, type UserTx } from '@agentyard/db';
import { creditBalanceUsd, monthUsage, spendingLimits, type Allowances } from '../spending/index.ts';

export interface SummaryOptions {
  admin: boolean;
  activeStatuses: readonly string[];
  allowances: Allowances;
}

/** The billing page: the plan now, the subscription behind it (else the latest one), credits, this month's spend and allowance, the user's limit. */
export async function billingSummary(trx: UserTx, userId: string, options: SummaryOptions) {
  const plan = await currentPlan(trx, userId, options);
  const subscriptions = await trx
    .selectFrom('subscriptions')
    .select(['status', 'plan', 'current_period_end', 'cancel_at_period_end'])
    .where('user_id', '=', userId)
    .orderBy('updated_at', 'desc')
    .limit(20)
    .execute();
  const shown =
    subscriptions.find((s) => options.activeStatuses.includes(s.status) && s.plan === plan) ?? subscriptions[0];
  const usage = await monthUsage(trx, userId, options);
  const limits = await spendingLimits(trx, userId);
  return {
    plan,
    subscription: shown
      ? {
          status: shown.status,
          plan: shown.plan,
          currentPeriodEnd: shown.current_period_end ? new Date(shown.current_period_end).toISOString() : null,
          cancelAtPeriodEnd: shown.cancel_at_period_end,
        }
      : null,
    credits: { balanceUsd: await creditBalanceUsd(trx, userId) },
    usage,
    limits: { monthlyUsd: limits.monthlyUsd },
  };
}

/** Whether the user already pays for a plan (a second subscription would bill twice: plan changes go through the portal). */
export async function hasActiveSubscription(
  trx: UserTx,
  userId: string,
  activeStatuses: readonly string[],
): Promise<boolean> {
  const row = await trx
    .selectFrom('subscriptions')
    .select('id')
    .where('user_id', '=', userId)
    .where('status', 'in', [...activeStatuses])
    .executeTakeFirst();
  return row !== undefined;
}
