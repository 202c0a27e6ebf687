import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createUserRow, identityHeaders, systemDb } from '@agentyard/testing';
import { activeSubscriptionRow, build } from './helper.ts';

// Mission control's costs: this month's AI spend per agent from the user's usage rows, the plan fee
// split over their agents, and the budget the AI gateway still admits.
const app = await build(t, {
  GBP_TO_USD: '1.25',
  PLAN_MONTHLY_ALLOWANCE_USD: 'solo:5,collective:15,label:40,network:150',
});
const db = systemDb();

async function agentOf(userId: string, name: string) {
  return (
    await db
      .insertInto('agents')
      .values({
        user_id: userId,
        name,
        model: 'm',
        tools_profile: 'messaging',
        subdomain: `c-${randomUUID().slice(0, 8)}`,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}
const today = new Date().toISOString().slice(0, 10);
const usage = (userId: string, agentId: string, cost: string, day = today) => ({
  day,
  user_ref: userId,
  user_id: userId,
  agent_id: agentId,
  model: 'm',
  provider: 'p',
  calls: 2,
  unpriced_calls: 0,
  input_tokens: 10,
  output_tokens: 10,
  total_tokens: 20,
  cost_usd: cost,
  turns: 2,
});

t.test('per agent cost and plan share, totals, and what the budget leaves', async (t) => {
  const alice = await createUserRow();
  await activeSubscriptionRow(alice.id, 'solo');
  const one = await agentOf(alice.id, 'one');
  const two = await agentOf(alice.id, 'two');
  const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15))
    .toISOString()
    .slice(0, 10);
  await db
    .insertInto('usage_daily')
    .values([
      usage(alice.id, one, '1.5'),
      usage(alice.id, two, '0.25'),
      usage(alice.id, '', '0.25'),
      usage(alice.id, one, '99', lastMonth),
    ])
    .execute();
  await db
    .insertInto('credit_entries')
    .values({ user_id: alice.id, kind: 'purchase', amount_usd: '10', source: `test:${randomUUID()}` })
    .execute();
  await db.insertInto('agent_spending_limits').values({ user_id: alice.id, agent_id: one, monthly_usd: '2' }).execute();
  const bob = await createUserRow();
  await db
    .insertInto('usage_daily')
    .values(usage(bob.id, await agentOf(bob.id, 'bobs'), '50'))
    .execute();

  const res = await app.inject({
    method: 'GET',
    url: '/api/mission-control/fleet/costs',
    headers: identityHeaders({ userId: alice.id, email: alice.email }),
  });
  t.equal(res.statusCode, 200);
  const costs = res.json();
  t.equal(costs.month, today.slice(0, 7));
  t.equal(costs.plan, 'solo');
  t.equal(costs.planFeeUsd, 36.25, 'solo is £29 at 1.25');
  t.same(costs.agents, [
    {
      agentId: one,
      name: 'one',
      aiCostUsd: 1.5,
      calls: 2,
      failedCalls: 0,
      tokens: 20,
      planShareUsd: 18.125,
      totalUsd: 19.625,
      limitLeftUsd: 0.5,
    },
    {
      agentId: two,
      name: 'two',
      aiCostUsd: 0.25,
      calls: 2,
      failedCalls: 0,
      tokens: 20,
      planShareUsd: 18.125,
      totalUsd: 18.375,
      limitLeftUsd: null,
    },
  ]);
  t.same(costs.totals, { aiCostUsd: 2, unattributedAiCostUsd: 0.25, planFeeUsd: 36.25, totalUsd: 38.25 });
  t.same(costs.budget, { includedUsd: 5, creditsUsd: 10, monthlyLimitUsd: null, spentUsd: 2, leftUsd: 13 });

  await db.insertInto('spending_limits').values({ user_id: alice.id, monthly_usd: '3' }).execute();
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: '/api/mission-control/fleet/costs',
        headers: identityHeaders({ userId: alice.id, email: alice.email }),
      })
    ).json().budget.leftUsd,
    1,
    "the user's own limit bounds it",
  );
});

t.test('a user without a plan or agents: zeros, free', async (t) => {
  const carol = await createUserRow();
  const costs = (
    await app.inject({
      method: 'GET',
      url: '/api/mission-control/fleet/costs',
      headers: identityHeaders({ userId: carol.id, email: carol.email }),
    })
  ).json();
  t.has(costs, {
    plan: 'free',
    planFeeUsd: 0,
    agents: [],
    totals: { aiCostUsd: 0, totalUsd: 0 },
    budget: { includedUsd: 0, leftUsd: 0 },
  });
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/mission-control/fleet/costs', headers: identityHeaders() }))
      .statusCode,
    401,
  );
});
