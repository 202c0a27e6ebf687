import { Type } from 'typebox';
import { ErrorBody, Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { route } from './route.ts';

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
    agents: Type.Array(Type.Object({ agentId: Uuid, monthlyUsd: LimitUsd }, { additionalProperties: false }), { maxItems: 500 }),
  },
  { additionalProperties: false },
);

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
};

/**
 * The Redis set of users whose AI allowance and credits are spent this month (UTC), under the
 * platform's key prefix: the AI gateway adds a user when it refuses a call for it and removes them
 * when credits or a plan change arrive; the scheduler pauses those users' prompts and heartbeats.
 */
export const spendExhaustedSetKey = (prefix: string, at: Date = new Date()) => `${prefix}:spend-exhausted:${at.toISOString().slice(0, 7)}`;
