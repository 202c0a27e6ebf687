import { HttpError } from '@agentyard/http';

/** Every error the AI gateway answers with, named once. */
export const AiErrors = {
  planRequired: () =>
    new HttpError(402, 'A paid plan is required (solo, collective, label or network)', 'PLAN_REQUIRED', {
      success: false,
    }),
  subscriptionRequired: () =>
    new HttpError(402, 'An active subscription is required', 'SUBSCRIPTION_REQUIRED', { success: false }),
  modelRestricted: (model: string, allowedModels: string[]) =>
    new HttpError(403, `Model ${model} is not available on this plan`, 'MODEL_RESTRICTED', { allowedModels }),
  modelNotFound: (model: string) => new HttpError(404, `Unknown model ${model}`),
  noModels: () => new HttpError(404, 'No models available'),
  providerNotFound: () => new HttpError(404, 'Unknown provider'),
  invalidToolTurn: (detail: string) => new HttpError(400, detail, 'INVALID_TOOL_TURN'),
  emptyMessages: () => new HttpError(400, 'messages must be a non-empty array'),
  nothingToEstimate: () => new HttpError(400, 'messages or prompt required'),
  quotaExceeded: () => new HttpError(429, 'Monthly token quota exceeded', 'QUOTA_EXCEEDED'),
  chatFailed: () => new HttpError(500, 'AI provider request failed'),
  creditsExhausted: () =>
    new HttpError(
      402,
      "This month's AI allowance and your credits are spent: add credits to continue",
      'CREDITS_EXHAUSTED',
      { success: false },
    ),
  creditsShort: (maximumUsd: number) =>
    new HttpError(
      402,
      `This call could cost up to $${maximumUsd.toFixed(4)}, more than this month's allowance and your credits have left: lower max_tokens or add credits`,
      'CREDITS_EXHAUSTED',
      {
        success: false,
      },
    ),
  tooManyConcurrentCalls: (limit: number) =>
    new HttpError(
      429,
      `At most ${limit} AI calls of one user run at once: wait for one to finish`,
      'TOO_MANY_CONCURRENT_CALLS',
    ),
  unpricedContent: (types: string[]) =>
    new HttpError(
      400,
      `Message parts the gateway cannot price before the call are not accepted: ${types.join(', ')}`,
      'UNPRICED_CONTENT',
    ),
  imagesNotAccepted: (model: string) =>
    new HttpError(400, `Image parts are not accepted by ${model}`, 'UNPRICED_CONTENT'),
  budgetExceeded: (message: string) => new HttpError(402, message, 'BUDGET_EXCEEDED', { success: false }),
  spendUnavailable: () => new HttpError(503, 'Spend check unavailable, try again shortly'),
  emptyRange: () => new HttpError(400, 'since must be before until'),
  badCursor: () => new HttpError(400, 'cursor is not one this list gave'),
  minuteLimitReached: (
    holder: 'agent' | 'key',
    what: 'requests' | 'tokens',
    limit: number,
    retryAfterSeconds: number,
  ) =>
    holder === 'agent'
      ? new HttpError(
          429,
          `This agent's limit of ${limit} ${what} per minute is reached: try again in ${retryAfterSeconds} s`,
          'AGENT_RATE_LIMITED',
        )
      : new HttpError(
          429,
          `This API key's limit of ${limit} ${what} per minute is reached: try again in ${retryAfterSeconds} s`,
          'KEY_RATE_LIMITED',
        ),
  minuteLimitBeyondCap: (field: string, cap: number, plan: string) =>
    new HttpError(400, `${field} can be at most ${cap} on the ${plan} plan`, 'BEYOND_PLAN_CAP'),
  ownKeyRefused: (provider: string, status: number, said: string | undefined) =>
    new HttpError(
      400,
      `${provider} refused your own ${provider} key (${status})${said ? `: ${said}` : ''}. Replace or remove it under Budgets`,
      'PROVIDER_KEY_REFUSED',
      {
        provider,
        providerStatus: status,
      },
    ),
  noProviderKey: (provider: string) => new HttpError(404, `No ${provider} key of yours is stored`),
  unknownAgent: (agentId: string) => new HttpError(404, `Agent ${agentId} not found`),
  unknownKey: (keyId: string) => new HttpError(404, `API key ${keyId} not found`),
  invalidAgentKey: () => new HttpError(401, 'Invalid AI key'),
  userKeyRequired: () => new HttpError(401, 'Send your API key as Authorization: Bearer sk_…'),
  messageRequired: () => new HttpError(400, 'Message required'),
  demoUnavailable: () => new HttpError(503, 'Demo unavailable — service not configured.'),
  demoBudgetReached: () => new HttpError(503, 'Demo unavailable — daily demo budget reached.'),
  demoModelUnavailable: () => new HttpError(400, 'Model not available in the demo'),
  demoFailed: () => new HttpError(500, 'Failed to get response'),
  webhookNotConfigured: () => new HttpError(503, 'Stripe webhooks are not configured'),
  badSignature: () => new HttpError(400, 'Invalid Stripe signature'),
  invalidCursor: () => new HttpError(400, 'Invalid cursor: pass the nextCursor of the previous page', 'INVALID_CURSOR'),
  alreadySubscribed: () =>
    new HttpError(
      409,
      'You already have an active subscription: change plans in the billing portal',
      'ALREADY_SUBSCRIBED',
    ),
  noBillingAccount: () =>
    new HttpError(409, 'No billing account yet: subscribe or buy credits first', 'NO_BILLING_ACCOUNT'),
  priceNotConfigured: (plan: string) => new HttpError(503, `Checkout for ${plan} is not configured`),
  billingNotConfigured: () => new HttpError(503, 'Billing is not configured'),
  paymentProviderFailed: () => new HttpError(502, 'The payment provider did not answer, try again shortly'),
  checkoutNotFound: () => new HttpError(404, 'Checkout not found'),
  checkoutUsed: () => new HttpError(410, 'This checkout was already completed or has expired', 'CHECKOUT_GONE'),
  wrongBillingProvider: () => new HttpError(404, 'Not found'),
  badCreditAmount: (field: string) => new HttpError(400, `${field} must have at most two decimals`),
  notOnWire: (model: string, wire: string, supported: string[]) =>
    new HttpError(
      400,
      `${model} is not served on ${wire}, which serves (on this plan): ${supported.join(', ') || 'none'}`,
      'MODEL_NOT_ON_WIRE',
      {
        supportedModels: supported,
      },
    ),
  providerRefused: (status: number) =>
    new HttpError(
      400,
      `The AI provider refused the request (${status}): check the body against its API`,
      'PROVIDER_REFUSED',
    ),
  noSubscription: () => new HttpError(409, 'No active subscription to cancel'),
  pluginRequired: () =>
    new HttpError(400, 'Name a plugin: `plugin` in the body or the x-plugin-id header', 'PLUGIN_REQUIRED'),
  unknownPlugin: (name: string, known: readonly string[]) =>
    new HttpError(400, `Unknown plugin ${name}: one of ${known.join(', ')}`, 'UNKNOWN_PLUGIN'),
  agentIdRequired: () => new HttpError(400, 'The agent plugin needs agentId'),
  agentUnreachable: () => new HttpError(502, 'The agent could not be reached, try again shortly'),
  agentRefused: (status: number, message: string, code?: string) => new HttpError(status, message, code),
  corsOriginRefused: () => new HttpError(403, 'This origin may not call the gateway', 'ORIGIN_NOT_ALLOWED'),
  urlRefused: (message: string) => new HttpError(400, message, 'URL_REFUSED'),
  pageTooLarge: (message: string) => new HttpError(413, message, 'PAGE_TOO_LARGE'),
  pageNotHtml: (message: string) => new HttpError(415, message, 'NOT_HTML'),
  pageUnreachable: (message: string) => new HttpError(502, message, 'PAGE_UNREACHABLE'),
  pageTimeout: (message: string) => new HttpError(504, message, 'PAGE_TIMEOUT'),
};
