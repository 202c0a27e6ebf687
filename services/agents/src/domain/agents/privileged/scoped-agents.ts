import { sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { checkAgentConfig } from '../agent-config.ts';
import { checkSkillLimit, type PlanCaller } from '../plan-limits.ts';
import { AgentErrors } from '../../../errors.ts';
import { agentName, newSubdomain } from '../agents.ts';
import { toolsProfileOf } from '../plans.ts';
import type { AgentRow } from '../agent-views.ts';

/**
 * Backend-surface (API key) agent records, on the system connection. A caller that names a user
 * (x-user-id) sees only that user's agents; without one it acts for the platform.
 */
export function scopedAgents(db: SystemDb, userId: string | null) {
  const base = () => {
    const q = db.selectFrom('agents').selectAll();
    return userId ? q.where('user_id', '=', userId) : q;
  };
  return {
    list: (): Promise<AgentRow[]> => base().orderBy('created_at', 'desc').execute(),

    async get(id: string): Promise<AgentRow> {
      const row = await base().where('id', '=', id).executeTakeFirst();
      if (!row) throw AgentErrors.notFound();
      return row;
    },

    async create(input: { name: string; plan?: string; aiProvider?: string }): Promise<AgentRow> {
      if (!userId) throw AgentErrors.userContextRequired();
      const owner = await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
      if (!owner) throw AgentErrors.userContextRequired();
      const plan = input.plan ?? 'free';
      return db
        .insertInto('agents')
        .values({
          user_id: userId,
          name: agentName(input.name),
          status: 'pending',
          plan,
          ai_provider: input.aiProvider ?? 'openrouter',
          model: 'openrouter/auto',
          tools_profile: toolsProfileOf(plan),
          subdomain: newSubdomain(),
          updated_at: sql<Date>`now()`,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Plan and provider change the record; the tools profile stays as created. `caller`: the caller's admin flag and the active statuses. */
    async update(
      id: string,
      input: { plan?: string; aiProvider?: string; config?: Record<string, unknown> },
      caller: Omit<PlanCaller, 'userId'>,
    ): Promise<AgentRow> {
      const current = await this.get(id);
      if (input.config) {
        checkAgentConfig(current, input.config);
        await checkSkillLimit(db, { ...caller, userId: current.user_id }, input.config);
      }
      return db
        .updateTable('agents')
        .set({
          plan: input.plan ?? current.plan,
          ai_provider: input.aiProvider ?? current.ai_provider,
          config: input.config ?? current.config,
          updated_at: sql<Date>`now()`,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },
  };
}
