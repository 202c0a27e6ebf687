import type { Plan } from '@agentyard/db';

/** Each plan's monthly AI allowance in USD, before credits are drawn on. */
export type Allowances = ReadonlyMap<Plan, number>;

export const DEFAULT_PLAN_ALLOWANCES = 'solo:5,collective:15,label:40,network:150';

/** Parses `solo:5,collective:15,...`; a plan not named has no allowance (credits only). */
export function parseAllowances(spec: string): Allowances {
  const allowances = new Map<Plan, number>();
  for (const entry of spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [plan, usd] = entry.split(':');
    const amount = Number(usd);
    if (!plan || !Number.isFinite(amount) || amount < 0)
      throw new Error(`PLAN_MONTHLY_ALLOWANCE_USD: bad entry "${entry}" (want plan:usd)`);
    allowances.set(plan as Plan, amount);
  }
  return allowances;
}

export const allowanceOf = (allowances: Allowances, plan: Plan | null): number =>
  plan ? (allowances.get(plan) ?? 0) : 0;

/** The first day (UTC) of `at`'s month, as a date string: the month spend and usage entries are counted by. */
export const monthStart = (at: Date = new Date()): string => `${at.toISOString().slice(0, 7)}-01`;
