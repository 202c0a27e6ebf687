import { sql, type UserTx } from '@agentyard/db';
import { WorkspaceErrors } from '../../errors.ts';
import { installedSkills } from '../agents/config-document.ts';
import { planOf, type PlanCaller } from '../agents/plan-limits.ts';

/** Dashboard `agents.limit` by plan (docs/limits.md); no plan gets the smallest. */
const AGENT_LIMIT_BY_PLAN: Record<string, number> = {
  free: 1,
  solo: 1,
  starter: 1,
  pro: 3,
  collective: 3,
  scale: 10,
  label: 10,
  enterprise: 100,
  network: 100,
};

export const FALLBACK_STATS = {
  agents: { active: 0, total: 0, limit: 1, newToday: 0 },
  skills: { installed: 0 },
  tasks: { total: 0 },
};

export async function dashboardStats(trx: UserTx, caller: PlanCaller) {
  const userId = caller.userId;
  const user = await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  if (!user) throw WorkspaceErrors.userNotFound();
  const plan = await planOf(trx, caller);
  const agents = await trx
    .selectFrom('agents')
    .select([
      sql<number>`count(*)::int`.as('total'),
      sql<number>`count(*) filter (where status in ('active', 'running'))::int`.as('active'),
      sql<number>`count(*) filter (where created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')::int`.as(
        'newToday',
      ),
    ])
    .executeTakeFirstOrThrow();
  const tasks = await trx
    .selectFrom('scheduled_tasks')
    .select(sql<number>`count(*)::int`.as('total'))
    .executeTakeFirstOrThrow();
  const saved = await trx.selectFrom('agent_configs').select('config').where('user_id', '=', userId).executeTakeFirst();
  return {
    agents: {
      active: agents.active,
      total: agents.total,
      limit: (plan && AGENT_LIMIT_BY_PLAN[plan]) ?? 1,
      newToday: agents.newToday,
    },
    skills: { installed: installedSkills(saved?.config ?? {}) },
    tasks: { total: tasks.total },
  };
}
