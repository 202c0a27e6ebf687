import { sql, type UserTx } from '@agentyard/db';
import { PLAN_PRICES_GBP, type Plan } from '@agentyard/proto-schemas';

export type CostPeriod = '7d' | '30d' | 'mtd';

const DAY_MS = 86_400_000;

const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const money = (n: number) => Number(n.toFixed(6));
const label = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

function periodStart(period: CostPeriod, now: Date): string {
  if (period === 'mtd') return `${isoDay(now).slice(0, 7)}-01`;
  return isoDay(new Date(now.getTime() - (period === '7d' ? 6 : 29) * DAY_MS));
}

/** The user's cost dashboard (`/api/dashboard/cost`) from the user's own usage rows (row-level security scopes every query). */
/** `currentPlanOfUser`: the caller's plan now (currentPlan), null when they have none (shown as `free`). */
export async function costDashboard(
  trx: UserTx,
  period: CostPeriod,
  gbpToUsd: number,
  currentPlanOfUser: Plan | null,
  now = new Date(),
) {
  const start = periodStart(period, now);
  const byAgentModel = await trx
    .selectFrom('usage_daily')
    .select([
      'agent_id',
      'model',
      sql<number>`sum(calls)::int8`.as('calls'),
      sql<number>`sum(failed_calls)::int8`.as('failed'),
      sql<number>`sum(total_tokens)::int8`.as('tokens'),
      sql<string>`sum(cost_usd)`.as('cost'),
    ])
    .where('day', '>=', start)
    .groupBy(['agent_id', 'model'])
    .execute();
  const byDay = await trx
    .selectFrom('usage_daily')
    .select([
      sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'),
      sql<number>`sum(total_tokens)::int8`.as('tokens'),
      sql<string>`sum(cost_usd)`.as('cost'),
    ])
    .where('day', '>=', start)
    .groupBy('day')
    .execute();
  const agents = await trx.selectFrom('agents').select(['id', 'name', 'status']).execute();

  const names = new Map(agents.map((a) => [a.id, a.name]));
  const perAgent = new Map<
    string,
    { tokens: number; cost: number; calls: number; served: number; models: Map<string, number> }
  >();
  const perModel = new Map<string, number>();
  let totalCost = 0;
  let totalTokens = 0;
  let totalCalls = 0;
  let totalServed = 0;
  for (const row of byAgentModel) {
    const cost = Number(row.cost);
    totalCost += cost;
    totalTokens += row.tokens;
    totalCalls += row.calls;
    totalServed += row.calls - row.failed;
    perModel.set(row.model, (perModel.get(row.model) ?? 0) + cost);
    const agent = perAgent.get(row.agent_id) ?? { tokens: 0, cost: 0, calls: 0, served: 0, models: new Map() };
    agent.tokens += row.tokens;
    agent.cost += cost;
    agent.calls += row.calls;
    agent.served += row.calls - row.failed;
    agent.models.set(row.model, (agent.models.get(row.model) ?? 0) + row.calls);
    perAgent.set(row.agent_id, agent);
  }

  const costByDay = new Map(byDay.map((d) => [d.day, d]));
  const daily = [];
  for (let t = new Date(`${start}T00:00:00Z`).getTime(); t <= now.getTime(); t += DAY_MS) {
    const day = isoDay(new Date(t));
    const row = costByDay.get(day);
    daily.push({ date: label(day), cost: money(Number(row?.cost ?? 0)), tokens: row?.tokens ?? 0 });
  }

  const plan = currentPlanOfUser ?? 'free';
  return {
    period,
    // A failed call costs nothing by rule: the average is over the calls served.
    summary: {
      totalCost: money(totalCost),
      totalTokens,
      totalCalls,
      avgCostPerCall: money(totalServed ? totalCost / totalServed : 0),
    },
    agents: [...perAgent.entries()]
      .map(([agentId, a]) => ({
        name: agentId === '' ? 'Direct API' : (names.get(agentId) ?? agentId),
        tokens: a.tokens,
        cost: money(a.cost),
        calls: a.calls,
        avgCostPerCall: money(a.served ? a.cost / a.served : 0),
        model: [...a.models.entries()].sort((x, y) => y[1] - x[1])[0]![0],
      }))
      .sort((x, y) => y.cost - x.cost),
    daily,
    modelBreakdown: [...perModel.entries()]
      .map(([model, cost]) => ({
        model,
        percent: totalCost ? Number(((cost / totalCost) * 100).toFixed(1)) : 0,
        cost: money(cost),
      }))
      .sort((x, y) => y.cost - x.cost),
    isMockData: false as const,
    plan,
    planMonthlyCost: Number((((PLAN_PRICES_GBP as Record<string, number>)[plan] ?? 0) * gbpToUsd).toFixed(2)),
    agentCount: agents.length,
    activeAgents: agents.filter((a) => a.status === 'active' || a.status === 'running').length,
  };
}
