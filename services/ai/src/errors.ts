import { HttpError } from '@agentyard/http';

/** Every error the AI gateway answers with, named once (spec §4.3, §4.4, §7, §8). */
export const AiErrors = {
  planRequired: () => new HttpError(402, 'A paid plan is required (solo, collective, label or network)', 'PLAN_REQUIRED', { success: false }),
  subscriptionRequired: () => new HttpError(402, 'An active subscription is required', 'SUBSCRIPTION_REQUIRED', { success: false }),
  modelRestricted: (model: string, allowedModels: string[]) => new HttpError(403, `Model ${model} is not available on this plan`, 'MODEL_RESTRICTED', { allowedModels }),
  modelNotFound: (model: string) => new HttpError(404, `Unknown model ${model}`),
  noModels: () => new HttpError(404, 'No models available'),
  providerNotFound: () => new HttpError(404, 'Unknown provider'),
  invalidToolTurn: (detail: string) => new HttpError(400, detail, 'INVALID_TOOL_TURN'),
  emptyMessages: () => new HttpError(400, 'messages must be a non-empty array'),
  nothingToEstimate: () => new HttpError(400, 'messages or prompt required'),
  quotaExceeded: () => new HttpError(429, 'Monthly token quota exceeded', 'QUOTA_EXCEEDED'),
  chatFailed: () => new HttpError(500, 'AI provider request failed'),
  creditsExhausted: () => new HttpError(402, 'This month\'s AI allowance and your credits are spent: add credits to continue', 'CREDITS_EXHAUSTED', { success: false }),
  budgetExceeded: (message: string) => new HttpError(402, message, 'BUDGET_EXCEEDED', { success: false }),
  spendUnavailable: () => new HttpError(503, 'Spend check unavailable, try again shortly'),
  badCursor: () => new HttpError(400, 'cursor is not one this list gave'),
  unknownAgent: (agentId: string) => new HttpError(404, `Agent ${agentId} not found`),
  invalidAgentKey: () => new HttpError(401, 'Invalid AI key'),
  messageRequired: () => new HttpError(400, 'Message required'),
  demoUnavailable: () => new HttpError(503, 'Demo unavailable — service not configured.'),
  demoBudgetReached: () => new HttpError(503, 'Demo unavailable — daily demo budget reached.'),
  demoModelUnavailable: () => new HttpError(400, 'Model not available in the demo'),
  demoFailed: () => new HttpError(500, 'Failed to get response'),
  webhookNotConfigured: () => new HttpError(503, 'Stripe webhooks are not configured'),
  badSignature: () => new HttpError(400, 'Invalid Stripe signature'),
};
