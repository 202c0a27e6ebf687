import { currentPlan, type Database, type Kysely, type Plan } from '@agentyard/db';
import { installedSkills, type AgentConfig } from './config-document.ts';
import { AgentErrors } from '../../errors.ts';
import { skillLimitOf } from './plans.ts';

/** Whose plan limits apply: the user's (their active subscription's), or an admin's (network's). */
export type PlanCaller = { userId: string; admin: boolean; activeStatuses: readonly string[] };

/** The signed-in caller of a user route, as a PlanCaller. */
export function planCaller(
  identity: { userId: string | null; admin: boolean },
  activeStatuses: readonly string[],
): PlanCaller {
  if (!identity.userId) throw AgentErrors.userContextRequired();
  return { userId: identity.userId, admin: identity.admin, activeStatuses };
}

/** The caller's plan now (null: no active subscription), on either surface's connection. */
export const planOf = (db: Kysely<Database>, caller: PlanCaller): Promise<Plan | null> =>
  currentPlan(db, caller.userId, { admin: caller.admin, activeStatuses: caller.activeStatuses });

/**
 * Plan limits: a configuration installs at most the plan's number of skills (admins:
 * network's; no plan: the smallest). 429 `SKILL_LIMIT` naming the limit otherwise. Checked
 * wherever a configuration is saved, restored or given to a new agent.
 */
export async function checkSkillLimit(db: Kysely<Database>, caller: PlanCaller, config: AgentConfig): Promise<void> {
  const installed = installedSkills(config);
  if (installed === 0) return;
  const limit = skillLimitOf((await planOf(db, caller)) ?? 'free');
  if (installed > limit) throw AgentErrors.skillLimit(limit);
}
