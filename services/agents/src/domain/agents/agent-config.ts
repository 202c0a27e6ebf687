import {
  defaultAgentConfig,
  isObject,
  managedKeyIn,
  validateAgentConfig,
  type AgentConfig,
} from './config-document.ts';
import { AgentErrors } from '../../errors.ts';
import type { AgentRow } from './agent-views.ts';

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
 * agent was created with (it does not change with the plan). 400 naming the key if not.
 */
export function checkAgentConfig(agent: Pick<AgentRow, 'tools_profile'>, config: AgentConfig): void {
  checkAgentPolicy(agent, config);
  const check = validateAgentConfig(config);
  if (!check.ok) throw AgentErrors.invalidConfig(check.message);
}

/** The platform's own rules whatever OpenClaw accepts: keys it writes itself, and the tools profile fixed at creation. */
export function checkAgentPolicy(agent: Pick<AgentRow, 'tools_profile'>, config: AgentConfig): void {
  const managed = managedKeyIn(config);
  if (managed) throw AgentErrors.invalidConfig(`Invalid config: ${managed} is set by the platform`);
  const profile = toolsOf(config).profile;
  if (profile !== undefined && profile !== agent.tools_profile)
    throw AgentErrors.invalidConfig(`Invalid config: tools.profile is fixed at creation (${agent.tools_profile})`);
}
