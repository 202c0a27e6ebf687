import { sql, type UserTx } from '@agentyard/db';
import { defaultAgentConfig, isObject, validateAgentConfig, type AgentConfig } from '../workspace/openclaw-config.ts';
import { getAgent } from './agents.ts';
import { AgentErrors } from '../../errors.ts';
import { checkSkillLimit, type PlanCaller } from './plan-limits.ts';
import type { AgentRow } from './shapes.ts';

const toolsOf = (config: AgentConfig): Record<string, unknown> => (isObject(config.tools) ? config.tools : {});

/** One agent's configuration as its owner sees it: its own, else its plan's defaults; `tools.profile` is the one fixed at creation. */
export function agentConfigView(row: AgentRow) {
  const isDefault = Object.keys(row.config).length === 0;
  const config = isDefault ? defaultAgentConfig(row.plan) : row.config;
  return {
    agentId: row.id,
    config: { ...config, tools: { ...toolsOf(config), profile: row.tools_profile } },
    isDefault,
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/**
 * A configuration an agent may be given: keys OpenClaw accepts only, and the tools profile the
 * agent was created with (spec §4.5: it does not change with the plan). 400 naming the key if not.
 */
export function checkAgentConfig(agent: Pick<AgentRow, 'tools_profile'>, config: AgentConfig): void {
  const check = validateAgentConfig(config);
  if (!check.ok) throw AgentErrors.invalidConfig(check.message);
  const profile = toolsOf(config).profile;
  if (profile !== undefined && profile !== agent.tools_profile) throw AgentErrors.invalidConfig(`Invalid config: tools.profile is fixed at creation (${agent.tools_profile})`);
}

/** Replaces one agent's configuration (its owner's transaction: anyone else's agent is 404). */
export async function saveAgentConfig(trx: UserTx, caller: PlanCaller, id: string, config: AgentConfig): Promise<AgentRow> {
  checkAgentConfig(await getAgent(trx, id), config);
  await checkSkillLimit(trx, caller, config);
  return trx.updateTable('agents').set({ config, updated_at: sql<Date>`now()` }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}
