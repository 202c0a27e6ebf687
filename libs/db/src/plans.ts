import { PLANS, type Plan } from '@agentyard/proto-schemas';
import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

export { PLANS, type Plan };

export const isPlan = (value: unknown): value is Plan =>
  typeof value === 'string' && (PLANS as readonly string[]).includes(value);

/** The plans' order: a higher rank buys more. */
export const planRank = (plan: Plan): number => PLANS.indexOf(plan);

/** The lower of two plans (a caller may ask for less than it pays for, never more). */
export const lowerPlan = (a: Plan, b: Plan): Plan => (planRank(a) <= planRank(b) ? a : b);

/** Stripe statuses that count as paying when configuration names none (SUBSCRIPTION_ACTIVE_STATUSES). */
export const DEFAULT_ACTIVE_STATUSES: readonly string[] = ['active', 'trialing'];

/** `SUBSCRIPTION_ACTIVE_STATUSES` ("active,trialing") as a list. */
export const activeStatusesOf = (setting: string | undefined): readonly string[] => {
  const statuses = (setting ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return statuses.length > 0 ? statuses : DEFAULT_ACTIVE_STATUSES;
};

export type PlanOptions = {
  /** The caller is an admin (the identity's flag on requests; the ADMIN_EMAILS rule on system paths). */
  admin: boolean;
  /** Statuses that count as active; default `active,trialing`. */
  activeStatuses?: readonly string[];
};

/**
 * The one answer to "what plan does this user have now": admins `network`; otherwise the plan of
 * the user's most recently updated active subscription; otherwise `null` (no plan). Works on the
 * user's own transaction (RLS shows only their subscriptions) and on the system connection.
 */
export async function currentPlan(db: Kysely<Database>, userId: string, options: PlanOptions): Promise<Plan | null> {
  if (options.admin) return 'network';
  const statuses = options.activeStatuses ?? DEFAULT_ACTIVE_STATUSES;
  if (statuses.length === 0) return null;
  const row = await db
    .selectFrom('subscriptions')
    .select('plan')
    .where('user_id', '=', userId)
    .where('status', 'in', [...statuses])
    .where('plan', 'in', [...PLANS])
    .orderBy('updated_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return isPlan(row?.plan) ? row.plan : null;
}

/** The users among `userIds` with a current plan, and which (one query; admins are the caller's to add). */
export async function currentPlans(
  db: Kysely<Database>,
  userIds: readonly string[],
  options: Omit<PlanOptions, 'admin'> = {},
): Promise<Map<string, Plan>> {
  const plans = new Map<string, Plan>();
  if (userIds.length === 0) return plans;
  const statuses = options.activeStatuses ?? DEFAULT_ACTIVE_STATUSES;
  const rows = await db
    .selectFrom('subscriptions')
    .select(['user_id', 'plan'])
    .where('user_id', 'in', [...userIds])
    .where('status', 'in', [...statuses])
    .where('plan', 'in', [...PLANS])
    .orderBy('updated_at', 'desc')
    .execute();
  for (const row of rows)
    if (row.user_id && isPlan(row.plan) && !plans.has(row.user_id)) plans.set(row.user_id, row.plan);
  return plans;
}
