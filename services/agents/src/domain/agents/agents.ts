import { randomBytes } from 'node:crypto';
import { sql, type UserTx } from '@agentyard/db';
import { AgentErrors } from '../../errors.ts';
import { checkSkillLimit, planOf, type PlanCaller } from './plan-limits.ts';
import { agentLimitOf, agentPlanFor, providerForModel, toolsProfileOf } from './plans.ts';
import type { AgentRow } from './agent-views.ts';
import { isObject, mergedConfig, type AgentConfig } from './config-document.ts';

/** Web-surface agent operations: every one runs in the caller's row-level-security transaction. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const listAgents = (trx: UserTx): Promise<AgentRow[]> =>
  trx.selectFrom('agents').selectAll().orderBy('created_at', 'desc').execute();

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
  /** Whether the owner's defaults for new agents (`/api/config`) go under `config` (not for a clone, which copies its source). */
  userDefaults?: boolean;
  /** A clone: its id (taken beforehand, for its seeding's turn), its source and the snapshot it is seeded from, recorded with its row. */
  clone?: { id: string; sourceAgentId: string; snapshotId: string };
}

/**
 * The owner's defaults for new agents (`/api/config`), without the tools profile (the
 * plan's, fixed at creation): what a new agent's configuration starts from. Empty when none is saved.
 */
export async function userAgentDefaults(trx: UserTx, userId: string): Promise<AgentConfig> {
  const saved = await trx.selectFrom('agent_configs').select('config').where('user_id', '=', userId).executeTakeFirst();
  if (!saved) return {};
  const { tools, ...rest } = saved.config as AgentConfig;
  const { profile: _fixed, ...otherTools } = isObject(tools) ? tools : {};
  return Object.keys(otherTools).length > 0 ? { ...rest, tools: otherTools } : rest;
}

/**
 * Records a new agent as `provisioning`. The user's row is locked first, so concurrent requests of
 * one user count agents one after the other and can never exceed the plan's limit together.
 */
export async function createProvisioningAgent(trx: UserTx, request: ProvisionRequest): Promise<AgentRow> {
  const name = agentName(request.name);
  const user = await trx
    .selectFrom('users')
    .select('id')
    .where('id', '=', request.userId)
    .forUpdate()
    .executeTakeFirst();
  if (!user) throw AgentErrors.userContextRequired();
  const userPlan = await planOf(trx, request);
  if (!userPlan) throw AgentErrors.subscriptionRequired();
  const config =
    request.userDefaults === false
      ? request.config
      : mergedConfig(await userAgentDefaults(trx, request.userId), request.config);
  await checkSkillLimit(trx, request, config);
  const plan = agentPlanFor(userPlan, request.tier);
  const limit = request.admin ? request.adminAgentLimit : agentLimitOf(userPlan);
  // An agent in error holds no slot: its owner may repair it (if a slot is free then) or delete it.
  const { count } = await trx
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '<>', 'error')
    .executeTakeFirstOrThrow();
  if (Number(count) >= limit) throw AgentErrors.agentLimit(limit);
  return trx
    .insertInto('agents')
    .values({
      ...(request.clone && {
        id: request.clone.id,
        cloned_from_agent_id: request.clone.sourceAgentId,
        cloned_from_snapshot_id: request.clone.snapshotId,
        seeding_snapshot_id: request.clone.snapshotId,
      }),
      user_id: request.userId,
      name,
      status: 'provisioning',
      plan,
      tier: request.tier ?? null,
      ai_provider: providerForModel(request.model, request.defaultProvider),
      model: request.model,
      tools_profile: toolsProfileOf(plan),
      subdomain: newSubdomain(),
      config,
      updated_at: sql<Date>`now()`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export const newSubdomain = () => `agent-${randomBytes(6).toString('hex')}`;

export async function userRuntime(trx: UserTx, userId: string) {
  const row = await trx
    .selectFrom('users')
    .select(['runtime_url', 'runtime_instance_id'])
    .where('id', '=', userId)
    .executeTakeFirst();
  // An instance id is an agent's; one that is no UUID (taken from a backend's answer before answers were checked) is none.
  return (
    row && {
      ...row,
      runtime_instance_id:
        row.runtime_instance_id && UUID.test(row.runtime_instance_id) ? row.runtime_instance_id : null,
    }
  );
}

/**
 * The owner's delete, first step: an agent of theirs is marked deleted (its id kept, nothing else)
 * and answered `remove`, for the runtime to take away; one they deleted before is `gone`; any
 * other id, another user's included, is 404.
 */
export async function markDeleted(trx: UserTx, userId: string, id: string): Promise<'remove' | 'gone'> {
  const agent = await trx.selectFrom('agents').select('id').where('id', '=', id).executeTakeFirst();
  if (agent) {
    await trx
      .insertInto('deleted_agents')
      .values({ id, user_id: userId })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return 'remove';
  }
  if (await trx.selectFrom('deleted_agents').select('id').where('id', '=', id).executeTakeFirst()) return 'gone';
  throw AgentErrors.notFound();
}
