import { currentPlan, sql, type AgentStatus, type Plan } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { resourcesFor } from '@agentyard/runtime';
import { AgentErrors } from '../../../errors.ts';
import { agentLimitOf, agentPlanFor } from '../plans.ts';
import type { AgentRow } from '../agent-views.ts';

/** Statuses of an agent that holds a container's resources, or is about to. */
// A hibernating (suspended) agent keeps its slot: any request wakes it.
export const HOLDING_STATUSES: readonly AgentStatus[] = [
  'pending',
  'provisioning',
  'deploying',
  'running',
  'active',
  'suspended',
];

export interface AllowanceRules {
  activeStatuses: readonly string[];
  /** Whether the owner is an admin (their plan is network's, their agent limit ADMIN_AGENT_LIMIT). */
  isAdmin(owner: { email: string; emailVerified: boolean }): boolean;
  adminAgentLimit: number;
  /** Plans without an agent limit: the most memory (bytes) and CPUs one user's running agents hold together. */
  userMemoryMaxBytes: number;
  userCpusMax: number;
  /** Across every user: the most agents holding resources, and their memory in bytes (0: no cap). */
  platformAgentsMax: number;
  platformMemoryMaxBytes: number;
}

type Holder = Pick<AgentRow, 'id' | 'plan' | 'created_at'>;

/**
 * What a user's plan lets run, decided in one place for every way an agent comes up (provisioning,
 * start, restart, repair, reset, image update) and for the job that stops what a plan no longer
 * covers: as many agents as the plan's limit, each no larger than the plan's own size, and (plans
 * without a limit) no more memory and CPUs together than the per-user cap; and, across the
 * platform, no more agents or memory than its capacity. System connection: it counts across users.
 */
export function agentAllowance(db: SystemDb, rules: AllowanceRules) {
  /** The owner's plan and agent limit; `admin`: the caller's own word (a signed-in admin), else read from the owner's address. */
  async function ownerPlan(userId: string, admin?: boolean): Promise<{ plan: Plan | null; limit: number }> {
    if (admin === undefined) {
      const user = await db
        .selectFrom('users')
        .select(['email', 'email_verified_at'])
        .where('id', '=', userId)
        .executeTakeFirst();
      if (!user) return { plan: null, limit: 0 };
      admin = rules.isAdmin({ email: user.email, emailVerified: user.email_verified_at !== null });
    }
    const plan = await currentPlan(db, userId, { admin, activeStatuses: rules.activeStatuses });
    return { plan, limit: !plan ? 0 : admin ? rules.adminAgentLimit : agentLimitOf(plan) };
  }

  const holders = (userId: string): Promise<Holder[]> =>
    db
      .selectFrom('agents')
      .select(['id', 'plan', 'created_at'])
      .where('user_id', '=', userId)
      .where('status', 'in', [...HOLDING_STATUSES])
      .orderBy('created_at')
      .orderBy('id')
      .execute();

  const fitsPlan = (agentPlan: string, plan: Plan) => {
    const agent = resourcesFor(agentPlan);
    const allowed = resourcesFor(plan);
    return agent.memoryBytes <= allowed.memoryBytes && agent.cpus <= allowed.cpus;
  };
  const total = (agents: { plan: string }[]) =>
    agents.reduce(
      (sum, a) => ({
        memoryBytes: sum.memoryBytes + resourcesFor(a.plan).memoryBytes,
        cpus: sum.cpus + resourcesFor(a.plan).cpus,
      }),
      { memoryBytes: 0, cpus: 0 },
    );
  const withinUserCap = (limit: number, agents: { plan: string }[]) => {
    if (Number.isFinite(limit)) return true;
    const sum = total(agents);
    return sum.memoryBytes <= rules.userMemoryMaxBytes && sum.cpus <= rules.userCpusMax;
  };

  /**
   * 503 when one more agent of `plan` would pass the platform's capacity (`except`: an agent already
   * counted). A hibernating agent that was stopped holds no memory (a paused one keeps all of it):
   * it counts as an agent, and its memory is counted again when a wake starts it (this check).
   */
  async function checkPlatform(plan: string, except: string | null): Promise<void> {
    if (rules.platformAgentsMax === 0 && rules.platformMemoryMaxBytes === 0) return;
    let query = db
      .selectFrom('agents')
      .select([
        'plan',
        (eb) => eb.fn.countAll<string>().as('n'),
        sql<string>`count(*) filter (where not (status = 'suspended' and hibernation is not distinct from 'stopped'))`.as(
          'holdingMemory',
        ),
      ])
      .where('status', 'in', [...HOLDING_STATUSES])
      .groupBy('plan');
    if (except) query = query.where('id', '<>', except);
    const byPlan = await query.execute();
    const agents = byPlan.reduce((n, r) => n + Number(r.n), 0) + 1;
    const memory =
      byPlan.reduce((bytes, r) => bytes + Number(r.holdingMemory) * resourcesFor(r.plan).memoryBytes, 0) +
      resourcesFor(plan).memoryBytes;
    if (
      (rules.platformAgentsMax > 0 && agents > rules.platformAgentsMax) ||
      (rules.platformMemoryMaxBytes > 0 && memory > rules.platformMemoryMaxBytes)
    )
      throw AgentErrors.platformAtCapacity();
  }

  return {
    /**
     * Before a new agent is recorded: the platform has room for it, and (plans without an agent
     * limit) the user's running agents and it stay under the per-user cap. The count limit is
     * checked where the agent is recorded, under the user's lock.
     */
    async admitNew(caller: { userId: string; admin: boolean }, tier: string | undefined): Promise<void> {
      const { plan, limit } = await ownerPlan(caller.userId, caller.admin);
      if (!plan) return; // recording it refuses it (403 SUBSCRIPTION_REQUIRED)
      const agentPlan = agentPlanFor(plan, tier);
      if (!withinUserCap(limit, [...(await holders(caller.userId)), { plan: agentPlan }]))
        throw AgentErrors.userResourcesLimit();
      await checkPlatform(agentPlan, null);
    },

    /**
     * Before `agent` comes up (again): the plan it runs on from now, its owner's current one (no
     * larger than the tier it was asked for), so its size follows an upgrade or a downgrade; the
     * owner's other running agents leave it room, and so does the platform.
     */
    async admit(agent: Pick<AgentRow, 'id' | 'user_id' | 'tier'>): Promise<Plan> {
      const { plan, limit } = await ownerPlan(agent.user_id);
      if (!plan) throw AgentErrors.subscriptionRequired();
      const follows = agentPlanFor(plan, agent.tier ?? undefined);
      const others = (await holders(agent.user_id)).filter((a) => a.id !== agent.id);
      if (others.length >= limit) throw AgentErrors.agentLimit(limit);
      if (!withinUserCap(limit, [...others, { plan: follows }])) throw AgentErrors.userResourcesLimit();
      await checkPlatform(follows, agent.id);
      return follows;
    },

    /**
     * The user's running agents their plan does not cover: kept are the oldest, up to the plan's
     * limit, each no larger than the plan's size, within the per-user cap; the rest are answered.
     */
    async beyondPlan(userId: string): Promise<string[]> {
      const { plan, limit } = await ownerPlan(userId);
      const running = await holders(userId);
      if (!plan) return running.map((a) => a.id);
      const kept: Holder[] = [];
      const beyond: string[] = [];
      for (const agent of running) {
        if (kept.length < limit && fitsPlan(agent.plan, plan) && withinUserCap(limit, [...kept, agent]))
          kept.push(agent);
        else beyond.push(agent.id);
      }
      return beyond;
    },
  };
}

export type AgentAllowance = ReturnType<typeof agentAllowance>;
