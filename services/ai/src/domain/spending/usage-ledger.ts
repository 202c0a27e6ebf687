import { sql, type Database, type Transaction } from '@agentyard/db';
import { monthStart } from './allowance.ts';

/** What the ledger needs of a newly written usage row. */
export interface BudgetedUsage {
  id: string;
  userId: string | null;
  costUsd: number | null;
  /** The plan's monthly allowance when the call drew on a budget; null or absent: it did not. */
  includedUsd?: number | null;
  at: Date;
}

/** Less than this is not worth a ledger entry (the column keeps 8 decimals). */
const SMALLEST_ENTRY_USD = 0.00000001;

const budgeted = (rows: BudgetedUsage[]) =>
  rows.filter(
    (r): r is BudgetedUsage & { userId: string; costUsd: number; includedUsd: number } =>
      r.userId !== null && r.costUsd !== null && r.includedUsd != null,
  );

/**
 * Batches of the same users take turns (before their rows are added up): a month's spend beyond
 * the allowance must be computed from every batch written before, however many writers run.
 */
export async function lockBudgetedUsers(trx: Transaction<Database>, rows: BudgetedUsage[]): Promise<void> {
  const users = [...new Set(budgeted(rows).map((r) => r.userId))].sort();
  if (users.length)
    await sql`select pg_advisory_xact_lock(hashtextextended(u, 7131)) from unnest(${users}::text[]) as u order by u`.execute(
      trx,
    );
}

/**
 * In the usage writer's transaction, once the batch's rows are in the daily totals: the part of
 * each user's month spend that this batch took beyond the plan's allowance becomes a `usage`
 * entry of the credits ledger (source: the batch's first row of the user, so a retried batch,
 * whose rows are no longer new, adds none).
 */
export async function settleBeyondAllowance(trx: Transaction<Database>, fresh: BudgetedUsage[]): Promise<void> {
  const groups = new Map<string, { userId: string; month: string; first: string; cost: number; allowance: number }>();
  for (const r of budgeted(fresh)) {
    const month = monthStart(r.at);
    const key = `${r.userId}|${month}`;
    const g = groups.get(key) ?? { userId: r.userId, month, first: r.id, cost: 0, allowance: 0 };
    g.cost += r.costUsd;
    g.allowance = Math.max(g.allowance, r.includedUsd);
    groups.set(key, g);
  }
  if (groups.size === 0) return;
  const { rows: totals } = await sql<{ user_id: string; month: string; cost: string }>`
    select d.user_id, g.month::text as month, sum(d.cost_usd) as cost
    from unnest(${[...groups.values()].map((g) => g.userId)}::uuid[], ${[...groups.values()].map((g) => g.month)}::date[]) as g(user_id, month)
    join usage_daily d on d.user_id = g.user_id and d.day >= g.month and d.day < g.month + interval '1 month'
    group by d.user_id, g.month`.execute(trx);
  const entries = totals.flatMap((t) => {
    const g = groups.get(`${t.user_id}|${t.month}`);
    if (!g) return [];
    const after = Number(t.cost);
    const beyond = Math.max(0, after - g.allowance) - Math.max(0, after - g.cost - g.allowance);
    return beyond >= SMALLEST_ENTRY_USD
      ? [
          {
            user_id: g.userId,
            kind: 'usage' as const,
            amount_usd: (-beyond).toFixed(8),
            note: `AI use beyond the plan's $${g.allowance} monthly allowance`,
            source: `usage:${g.first}`,
            usage_month: g.month,
          },
        ]
      : [];
  });
  if (entries.length)
    await trx
      .insertInto('credit_entries')
      .values(entries)
      .onConflict((oc) => oc.column('source').doNothing())
      .execute();
}
