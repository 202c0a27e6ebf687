import { currentPlan, sql, type Database, type Kysely } from '@agentyard/db';
import { allowanceOf, DEFAULT_PLAN_ALLOWANCES, monthStart, parseAllowances, type Allowances } from './allowance.ts';

const defaultAllowances = parseAllowances(DEFAULT_PLAN_ALLOWANCES);

export interface MonthUsageOptions {
  admin?: boolean;
  activeStatuses?: readonly string[];
  /** PLAN_MONTHLY_ALLOWANCE_USD parsed (default solo 5, collective 15, label 40, network 150). */
  allowances?: Allowances;
  now?: Date;
}

/** What the user's AI calls cost this month (UTC, written usage rows) and the allowance their plan includes. */
export async function monthUsage(
  db: Kysely<Database>,
  userId: string,
  options: MonthUsageOptions = {},
): Promise<{ monthUsd: number; includedUsd: number }> {
  const row = await db
    .selectFrom('usage_daily')
    .select(sql<string>`coalesce(sum(cost_usd), 0)`.as('cost'))
    .where('user_id', '=', userId)
    .where('day', '>=', monthStart(options.now))
    .executeTakeFirst();
  const plan = await currentPlan(db, userId, { admin: options.admin ?? false, activeStatuses: options.activeStatuses });
  return { monthUsd: Number(row?.cost ?? 0), includedUsd: allowanceOf(options.allowances ?? defaultAllowances, plan) };
}
