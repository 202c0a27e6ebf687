import { PLANS, type Plan } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';
import { catalogById, modelsForPlan, selectModel, type CatalogEntry } from './model-catalog.ts';

export interface Access {
  plan: Plan;
  models: CatalogEntry[];
}

const isPlan = (value: string | undefined | null): value is Plan =>
  !!value && (PLANS as readonly string[]).includes(value);
const rank = (plan: Plan) => PLANS.indexOf(plan);

export interface PlanClaim {
  admin: boolean;
  plan: string | undefined | null;
  /** The active subscription backing the claim, if any (plan is null when Stripe named none). */
  subscription: { plan: string | null } | undefined;
}

/**
 * Admins get network access with no checks; everyone else needs a paid plan
 * (402 PLAN_REQUIRED) and an active subscription (402 SUBSCRIPTION_REQUIRED) that covers it.
 */
export function resolveAccess(claim: PlanClaim): Access {
  if (claim.admin) return { plan: 'network', models: modelsForPlan('network') };
  if (!isPlan(claim.plan)) throw AiErrors.planRequired();
  if (!claim.subscription) throw AiErrors.subscriptionRequired();
  const paidFor = claim.subscription.plan;
  if (isPlan(paidFor) && rank(paidFor) < rank(claim.plan)) throw AiErrors.subscriptionRequired();
  return { plan: claim.plan, models: modelsForPlan(claim.plan) };
}

/** A caller whose plan is known (currentPlan): its models, or 402 SUBSCRIPTION_REQUIRED without a plan. */
export function accessForPlan(plan: Plan | null): Access {
  if (!plan) throw AiErrors.subscriptionRequired();
  return { plan, models: modelsForPlan(plan) };
}

/** The model to use: the one asked for (404 unknown, 403 not on the plan) or the task type's pick. */
export function chooseModel(
  access: Access,
  modelId: string | undefined,
  taskType: string,
  usable: (m: CatalogEntry) => boolean,
): CatalogEntry {
  if (modelId) {
    const model = catalogById.get(modelId);
    if (!model) throw AiErrors.modelNotFound(modelId);
    if (!access.models.includes(model))
      throw AiErrors.modelRestricted(
        modelId,
        access.models.map((m) => m.id),
      );
    return model;
  }
  const model = selectModel(access.models.filter(usable), taskType);
  if (!model) throw AiErrors.noModels();
  return model;
}

/** Monthly token quotas by plan (network: none). */
export const MONTHLY_TOKEN_QUOTA: Record<Plan, number> = {
  solo: 2_000_000,
  collective: 6_000_000,
  label: 20_000_000,
  network: Infinity,
};
