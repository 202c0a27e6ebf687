import { sql, type Database, type Kysely, type Transaction } from '@agentyard/db';

export interface Limits {
  /** The user's monthly limit on all AI spend; null: none (allowance and credits still bound it). */
  monthlyUsd: number | null;
  agents: { agentId: string; monthlyUsd: number }[];
}

/** The user's own monthly spending limits. */
export async function spendingLimits(db: Kysely<Database>, userId: string): Promise<Limits> {
  const user = await db
    .selectFrom('spending_limits')
    .select('monthly_usd')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const agents = await db
    .selectFrom('agent_spending_limits')
    .select(['agent_id', 'monthly_usd'])
    .where('user_id', '=', userId)
    .orderBy('agent_id')
    .execute();
  return {
    monthlyUsd: user?.monthly_usd == null ? null : Number(user.monthly_usd),
    agents: agents.map((a) => ({ agentId: a.agent_id, monthlyUsd: Number(a.monthly_usd) })),
  };
}

/**
 * Replaces the user's limits, in the user's own transaction: an agent limit names one of the
 * user's agents (RLS shows no other), else `unknownAgent` is thrown and nothing changes.
 */
export async function setSpendingLimits(
  trx: Transaction<Database>,
  userId: string,
  limits: Limits,
  unknownAgent: (agentId: string) => Error,
): Promise<Limits> {
  const agentIds = [...new Set(limits.agents.map((a) => a.agentId))];
  if (agentIds.length) {
    const owned = new Set(
      (await trx.selectFrom('agents').select('id').where('id', 'in', agentIds).execute()).map((a) => a.id),
    );
    const missing = agentIds.find((id) => !owned.has(id));
    if (missing) throw unknownAgent(missing);
  }
  await trx
    .insertInto('spending_limits')
    .values({ user_id: userId, monthly_usd: limits.monthlyUsd, updated_at: sql`now()` })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ monthly_usd: limits.monthlyUsd, updated_at: sql`now()` }))
    .execute();
  await trx.deleteFrom('agent_spending_limits').where('user_id', '=', userId).execute();
  // The last limit named for an agent counts.
  const byAgent = new Map(limits.agents.map((a) => [a.agentId, a.monthlyUsd]));
  if (byAgent.size) {
    await trx
      .insertInto('agent_spending_limits')
      .values(
        [...byAgent].map(([agentId, usd]) => ({
          agent_id: agentId,
          user_id: userId,
          monthly_usd: usd,
          updated_at: sql`now()`,
        })),
      )
      .execute();
  }
  return spendingLimits(trx, userId);
}
