import { sql, type Plan, type UserTx } from '@agentyard/db';
import { PLAN_PRICES_GBP } from '@agentyard/proto-schemas';
import { allowanceOf, monthStart, type Allowances } from './spending/allowance.ts';
import { creditPoolUsd } from './spending/ledger.ts';
import { spendingLimits } from './spending/limits.ts';

const money = (n: number) => Number(n.toFixed(6));

export interface FleetCostOptions {
  plan: Plan | null;
  allowances: Allowances;
  gbpToUsd: number;
  now?: Date;
}

/**
 * Mission control's costs (issue 32), from the user's own rows: this month's AI spend per agent (the
 * usage rows written so far), the plan's monthly fee split evenly over their agents, and what the
 * AI gateway still admits: allowance plus credits past this month's spend, bounded by the user's limit.
 */
export async function fleetCosts(trx: UserTx, userId: string, options: FleetCostOptions) {
  const now = options.now ?? new Date();
  const start = monthStart(now);
  const agents = await trx.selectFrom('agents').select(['id', 'name']).orderBy('created_at').orderBy('id').execute();
  const usage = await trx
    .selectFrom('usage_daily')
    .select([
      'agent_id',
      sql<string>`sum(cost_usd)`.as('cost'),
      sql<string>`sum(calls)`.as('calls'),
      sql<string>`sum(failed_calls)`.as('failedCalls'),
      sql<string>`sum(total_tokens)`.as('tokens'),
    ])
    .where('day', '>=', start)
    .groupBy('agent_id')
    .execute();
  const limits = await spendingLimits(trx, userId);
  const credits = await creditPoolUsd(trx, userId, start);

  const byAgent = new Map(usage.map((u) => [u.agent_id, u]));
  const agentIds = new Set(agents.map((a) => a.id));
  const agentLimits = new Map(limits.agents.map((l) => [l.agentId, l.monthlyUsd]));
  const planFeeUsd = options.plan ? money(PLAN_PRICES_GBP[options.plan] * options.gbpToUsd) : 0;
  const share = agents.length ? planFeeUsd / agents.length : 0;
  const spent = usage.reduce((sum, u) => sum + Number(u.cost), 0);
  const unattributed = usage.filter((u) => !agentIds.has(u.agent_id)).reduce((sum, u) => sum + Number(u.cost), 0);

  const rows = agents.map((a) => {
    const u = byAgent.get(a.id);
    const cost = Number(u?.cost ?? 0);
    const limit = agentLimits.get(a.id);
    return {
      agentId: a.id,
      name: a.name,
      aiCostUsd: money(cost),
      calls: Number(u?.calls ?? 0),
      failedCalls: Number(u?.failedCalls ?? 0),
      tokens: Number(u?.tokens ?? 0),
      planShareUsd: money(share),
      totalUsd: money(cost + share),
      limitLeftUsd: limit === undefined ? null : money(Math.max(0, limit - cost)),
    };
  });
  const included = allowanceOf(options.allowances, options.plan);
  const fromPool = Math.max(0, included + credits - spent);
  const left = limits.monthlyUsd === null ? fromPool : Math.min(fromPool, Math.max(0, limits.monthlyUsd - spent));
  return {
    month: start.slice(0, 7),
    plan: options.plan ?? 'free',
    planFeeUsd,
    agents: rows,
    totals: {
      aiCostUsd: money(spent),
      unattributedAiCostUsd: money(unattributed),
      planFeeUsd,
      totalUsd: money(spent + planFeeUsd),
    },
    budget: {
      includedUsd: included,
      creditsUsd: money(credits),
      monthlyLimitUsd: limits.monthlyUsd,
      spentUsd: money(spent),
      leftUsd: money(left),
    },
  };
}
