import { Type } from 'typebox';
import { ErrorBody, Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { route } from './route.ts';
import { AgentAiProvider, AgentPathParams } from './agents.ts';

/** A USD amount a user sets as a limit: at most a million a month, cents and below kept. */
const LimitUsd = Type.Number({ minimum: 0, maximum: 1_000_000 });

export const CREDIT_KINDS = ['purchase', 'usage', 'refund', 'grant'] as const;
export type CreditKindName = (typeof CREDIT_KINDS)[number];

export const CreditEntry = Type.Object({
  id: Uuid,
  kind: Type.Union([Type.Literal('purchase'), Type.Literal('usage'), Type.Literal('refund'), Type.Literal('grant')]),
  /** Positive adds credits (purchase, grant), negative takes them (usage, refund). */
  amountUsd: Type.Number(),
  createdAt: IsoDate,
  note: Type.String(),
});

export const CreditsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    /** `nextCursor` of the previous page. */
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' })),
  },
  { additionalProperties: false },
);

export const Credits = Type.Object({
  balanceUsd: Type.Number(),
  /** Newest first. */
  entries: Type.Array(CreditEntry),
  nextCursor: Nullable(Type.String()),
});

/** A user's own monthly limits on AI spend: `monthlyUsd` for all of it (null: none), `agents` per agent. */
export const SpendingLimits = Type.Object(
  {
    monthlyUsd: Nullable(LimitUsd),
    agents: Type.Array(Type.Object({ agentId: Uuid, monthlyUsd: LimitUsd }, { additionalProperties: false }), {
      maxItems: 500,
    }),
  },
  { additionalProperties: false },
);

const PerMinute = Type.Integer({ minimum: 1, maximum: 1_000_000_000 });

/** A caller's own limits on its AI calls per minute (an agent's, a user key's), set by its owner (null: none beyond the plan's caps). */
export const MinuteLimitsInput = Type.Object(
  { requestsPerMinute: Nullable(PerMinute), tokensPerMinute: Nullable(PerMinute) },
  { additionalProperties: false },
);

/** The per-minute limits as set (null: none), as every answer that shows them carries them. */
export const MinuteLimitValues = {
  requestsPerMinute: Nullable(Type.Integer()),
  tokensPerMinute: Nullable(Type.Integer()),
};

/** The plan's caps on per-minute limits. */
export const MinuteLimitCaps = Type.Object({ requestsPerMinute: Type.Integer(), tokensPerMinute: Type.Integer() });

/** A caller's per-minute limits as its owner sees them: its id (as `idField`), the limits and the plan's caps they must stay within. */
export const OwnMinuteLimits = <IdField extends string>(idField: IdField) =>
  Type.Object({
    ...({ [idField]: Uuid } as { [field in IdField]: typeof Uuid }),
    ...MinuteLimitValues,
    caps: MinuteLimitCaps,
  });

/** An agent's per-minute limits and the plan's caps they must stay within. */
export const AgentMinuteLimits = OwnMinuteLimits('agentId');

/** A provider a user may bring their own key for (BYOK): the fallback chain's, as an agent names its provider. */
export const ProviderKeyParams = Type.Object({ provider: AgentAiProvider });

/** A user's own provider key, as sent once: write-only, never shown again. */
export const ProviderKeyInput = Type.Object(
  { apiKey: Type.String({ minLength: 8, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' }) },
  { additionalProperties: false },
);

/** A stored provider key as its owner sees it: the provider and the key's last four characters. */
export const ProviderKey = Type.Object({
  provider: AgentAiProvider,
  hint: Type.String({ maxLength: 4 }),
  updatedAt: IsoDate,
});
export const ProviderKeys = Type.Object({ keys: Type.Array(ProviderKey) });

/** 402 `CREDITS_EXHAUSTED` (allowance and credits spent) or `BUDGET_EXCEEDED` (a user-set limit reached). */
export const SpendRefusal = ErrorBody;

export const spendingRoutes = {
  credits: route({
    method: 'GET',
    url: '/api/credits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: 'The credits ledger: balance and entries, newest first, by cursor',
    schema: { querystring: CreditsQuery, response: { 200: Credits, ...Errors } },
  }),
  getLimits: route({
    method: 'GET',
    url: '/api/billing/limits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: "The user's own monthly AI spending limits, overall and per agent",
    schema: { response: { 200: SpendingLimits, ...Errors } },
  }),
  putLimits: route({
    method: 'PUT',
    url: '/api/billing/limits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: "Sets the monthly AI spending limits (replaces them; only the user's own agents)",
    schema: { body: SpendingLimits, response: { 200: SpendingLimits, ...Errors } },
  }),
  // The AI gateway's rule on an agents-service record: served by ai, which enforces it on every call.
  getAgentMinuteLimits: route({
    method: 'GET',
    url: '/api/agents/:id/limits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary: "The agent's AI requests and tokens per minute, and the plan's caps on them",
    schema: { params: AgentPathParams, response: { 200: AgentMinuteLimits, ...Errors } },
  }),
  putAgentMinuteLimits: route({
    method: 'PUT',
    url: '/api/agents/:id/limits',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-gateway',
    summary:
      "Sets the agent's AI requests and tokens per minute (null: none), within the plan's caps; beyond them its calls are answered 429 with Retry-After",
    schema: { params: AgentPathParams, body: MinuteLimitsInput, response: { 200: AgentMinuteLimits, ...Errors } },
  }),
  providerKeys: route({
    method: 'GET',
    url: '/api/billing/provider-keys',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: "The user's own provider keys (BYOK): each provider and its key's last 4 characters, never the key",
    schema: { response: { 200: ProviderKeys, ...Errors } },
  }),
  putProviderKey: route({
    method: 'PUT',
    url: '/api/billing/provider-keys/:provider',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary:
      "Stores (or replaces) the user's own key for a provider: sealed, write-only; that provider's calls on /v1 then use it and draw nothing from the allowance",
    schema: { params: ProviderKeyParams, body: ProviderKeyInput, response: { 200: ProviderKey, ...Errors } },
  }),
  deleteProviderKey: route({
    method: 'DELETE',
    url: '/api/billing/provider-keys/:provider',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: "Removes the user's own key for a provider: its calls go back to the platform's key and the allowance",
    schema: { params: ProviderKeyParams, response: { 200: ProviderKeys, ...Errors } },
  }),
};

/**
 * The Redis set of users whose AI allowance and credits are spent this month (UTC), under the
 * platform's key prefix: the AI gateway adds a user when it refuses a call for it and removes them
 * when credits or a plan change arrive; the scheduler pauses those users' prompts and heartbeats.
 */
export const spendExhaustedSetKey = (prefix: string, at: Date = new Date()) =>
  `${prefix}:spend-exhausted:${at.toISOString().slice(0, 7)}`;
