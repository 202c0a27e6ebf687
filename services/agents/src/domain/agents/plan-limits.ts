import type { Database, Kysely } from '@agentyard/db';
import { installedSkills, type AgentConfig } from '../workspace/openclaw-config.ts';
import { AgentErrors } from './errors.ts';
import { isActiveSubscription, skillLimitOf } from './plans.ts';

/** Whose plan limits apply: the user's, or an admin's (network's). */
export type PlanCaller = { userId: string; admin: boolean };

/** The signed-in caller of a user route, as a PlanCaller. */
export function planCaller(identity: { userId: string | null; admin: boolean }): PlanCaller {
  if (!identity.userId) throw AgentErrors.userContextRequired();
  return { userId: identity.userId, admin: identity.admin };
}

/** The user's newest active subscription, if any (on either surface's connection). */
export async function activeSubscription(db: Kysely<Database>, userId: string) {
  const subscriptions = await db.selectFrom('subscriptions').select(['status', 'plan']).where('user_id', '=', userId).orderBy('updated_at', 'desc').execute();
  return subscriptions.find((s) => isActiveSubscription(s.status));
}

/** The plan a user's limits follow: their active subscription's, else their own. */
async function limitsPlanOf(db: Kysely<Database>, userId: string): Promise<string> {
  const subscription = await activeSubscription(db, userId);
  if (subscription?.plan) return subscription.plan;
  const user = await db.selectFrom('users').select('plan').where('id', '=', userId).executeTakeFirst();
  return user?.plan ?? 'free';
}

/**
 * Spec §8 plan limits: a configuration installs at most the plan's number of skills (admins:
 * network's). 429 `SKILL_LIMIT` naming the limit otherwise. Checked wherever a configuration is
 * saved, restored or given to a new agent.
 */
export async function checkSkillLimit(db: Kysely<Database>, caller: PlanCaller, config: AgentConfig): Promise<void> {
  const installed = installedSkills(config);
  if (installed === 0) return;
  const limit = skillLimitOf(caller.admin ? 'network' : await limitsPlanOf(db, caller.userId));
  if (installed > limit) throw AgentErrors.skillLimit(limit);
}
