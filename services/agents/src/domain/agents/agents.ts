import { randomBytes } from 'node:crypto';
import { sql, type UserTx } from '@agentyard/db';
import { AgentErrors } from '../../errors.ts';
import { checkSkillLimit, planOf, type PlanCaller } from './plan-limits.ts';
import { agentLimitOf, agentPlanFor, providerForModel, toolsProfileOf } from './plans.ts';
import type { AgentRow } from './shapes.ts';

/** Web-surface agent operations: every one runs in the caller's row-level-security transaction. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const listAgents = (trx: UserTx): Promise<AgentRow[]> => trx.selectFrom('agents').selectAll().orderBy('created_at', 'desc').execute();

export async function getAgent(trx: UserTx, id: string): Promise<AgentRow> {
  const row = await trx.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw AgentErrors.notFound();
  return row;
}

/** Spec: 1 to 64 characters after trimming. */
export function agentName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 64) throw AgentErrors.badName();
  return name;
}

export async function renameAgent(trx: UserTx, id: string, name: string): Promise<AgentRow> {
  const row = await trx
    .updateTable('agents')
    .set({ name: agentName(name), updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw AgentErrors.notFound();
  return row;
}

export interface ProvisionRequest extends PlanCaller {
  name: string;
  model: string;
  tier: string | undefined;
  config: Record<string, unknown>;
  defaultProvider: string;
  adminAgentLimit: number;
}

/**
 * Records a new agent as `provisioning`. The user's row is locked first, so concurrent requests of
 * one user count agents one after the other and can never exceed the plan's limit together.
 */
export async function createProvisioningAgent(trx: UserTx, request: ProvisionRequest): Promise<AgentRow> {
  const name = agentName(request.name);
  const user = await trx.selectFrom('users').select('id').where('id', '=', request.userId).forUpdate().executeTakeFirst();
  if (!user) throw AgentErrors.userContextRequired();
  const userPlan = await planOf(trx, request);
  if (!userPlan) throw AgentErrors.subscriptionRequired();
  await checkSkillLimit(trx, request, request.config);
  const plan = agentPlanFor(userPlan, request.tier);
  const limit = request.admin ? request.adminAgentLimit : agentLimitOf(userPlan);
  const { count } = await trx
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  if (Number(count) >= limit) throw AgentErrors.agentLimit(limit);
  return trx
    .insertInto('agents')
    .values({
      user_id: request.userId,
      name,
      status: 'provisioning',
      plan,
      tier: request.tier ?? null,
      ai_provider: providerForModel(request.model, request.defaultProvider),
      model: request.model,
      tools_profile: toolsProfileOf(plan),
      subdomain: newSubdomain(),
      config: request.config,
      updated_at: sql<Date>`now()`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export const newSubdomain = () => `agent-${randomBytes(6).toString('hex')}`;

export async function userRuntime(trx: UserTx, userId: string) {
  const row = await trx.selectFrom('users').select(['runtime_url', 'runtime_instance_id']).where('id', '=', userId).executeTakeFirst();
  // An instance id is an agent's; one that is no UUID (taken from a backend's answer before answers were checked) is none.
  return row && { ...row, runtime_instance_id: row.runtime_instance_id && UUID.test(row.runtime_instance_id) ? row.runtime_instance_id : null };
}
