import { lowerPlan, type Plan, type ToolsProfile } from '@agentyard/db';

/** The web tier maps to a plan. */
const PLAN_OF_TIER: Record<string, Plan> = { starter: 'solo', pro: 'collective', enterprise: 'network' };

/**
 * The plan a new agent runs on: the user's own plan, or a lower one when the requested tier asks
 * for less; a tier can never raise it (a solo subscriber asking `enterprise` gets solo).
 */
export function agentPlanFor(userPlan: Plan, tier: string | undefined): Plan {
  const asked = tier ? PLAN_OF_TIER[tier] : undefined;
  return asked ? lowerPlan(userPlan, asked) : userPlan;
}

/** Agents a plan may provision (docs/limits.md); network is unlimited. Unknown or free plans get the smallest. */
const AGENT_LIMITS: Record<string, number> = {
  free: 1,
  solo: 1,
  collective: 3,
  label: 10,
  network: Number.POSITIVE_INFINITY,
};
export const agentLimitOf = (plan: string): number => AGENT_LIMITS[plan] ?? 1;

/**
 * Plan limits on skills (solo 3, collective 10, label 25, network 100), with the legacy
 * aliases at the plans of their agent limits; free and unknown plans get the smallest. Admins: network's.
 */
const SKILL_LIMITS: Record<string, number> = {
  free: 3,
  solo: 3,
  starter: 3,
  collective: 10,
  pro: 10,
  label: 25,
  scale: 25,
  network: 100,
  enterprise: 100,
};
export const skillLimitOf = (plan: string): number => SKILL_LIMITS[plan] ?? 3;

/** Collective and higher, with the legacy aliases at those plans' agent limits (pro 3, scale 10, enterprise 100). */
const CODING_PLANS = new Set(['collective', 'label', 'network', 'pro', 'scale', 'enterprise']);
/** The tools profile: `coding` for collective and higher, `messaging` for solo (and free, starter); fixed at creation. */
export const toolsProfileOf = (plan: string): ToolsProfile => (CODING_PLANS.has(plan) ? 'coding' : 'messaging');

/** `claude-opus-4-6` runs on anthropic, everything else on the configured provider. */
export const providerForModel = (model: string, configured: string): string =>
  model === 'claude-opus-4-6' ? 'anthropic' : configured;

/**
 * The model id an agent asks the AI gateway for. A provisioning choice (`claude-opus-4-6`, `gpt-4`,
 * `custom`) names no model of the gateway's catalog: `auto` lets the gateway take the agent's
 * provider's primary model where the owner's plan has it, else the plan's pick (the
 * provider maps to the model). A catalog id (`<vendor>/<model>`) is asked for as it is.
 */
export const gatewayModelId = (model: string): string => (model.includes('/') ? model : 'auto');
