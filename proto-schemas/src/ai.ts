import { Type } from 'typebox';
import { Email, ErrorBody, Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { NextCursor, PageQueryFields } from './pagination.ts';
import { route } from './route.ts';

/** Providers of the fallback chain (docs/protocols.md); `minimax` is in the provider map but not here, so it is refused as an `aiProvider`. */
export const AI_PROVIDERS = ['openrouter', 'gemini', 'groq', 'anthropic', 'openai'] as const;
export type AiProvider = (typeof AI_PROVIDERS)[number];
export const PLANS = ['solo', 'collective', 'label', 'network'] as const;
export type Plan = (typeof PLANS)[number];

/**
 * The most requests and tokens (prompt and answer) per minute an owner may allow one agent on each
 * plan: the ceiling of `PUT /api/agents/:id/limits`, and of a limit set on a plan since lowered.
 */
export const PLAN_MINUTE_CAPS: Record<Plan, { requestsPerMinute: number; tokensPerMinute: number }> = {
  solo: { requestsPerMinute: 60, tokensPerMinute: 200_000 },
  collective: { requestsPerMinute: 120, tokensPerMinute: 500_000 },
  label: { requestsPerMinute: 300, tokensPerMinute: 1_500_000 },
  network: { requestsPerMinute: 1_000, tokensPerMinute: 5_000_000 },
};

const ModelId = Type.String({ minLength: 1, maxLength: 200 });
const Timestamp = Type.String();
const Usage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});
const ChatRole = Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]);

/** An AI caller's `x-user-id` names whom usage is billed to, a user's id or the caller's own reference (default `anonymous`). */
export const AiCallerHeaders = Type.Object({
  'x-user-id': Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' })),
});

/** Plan headers; checked by the service (402/403), so optional to the schema. */
export const PlanHeaders = Type.Object({
  ...AiCallerHeaders.properties,
  'x-user-plan': Type.Optional(Type.String({ maxLength: 64 })),
  'x-stripe-subscription-id': Type.Optional(Type.String({ maxLength: 255 })),
  'x-user-email': Type.Optional(Email),
});

/** 402 `PLAN_REQUIRED` / `SUBSCRIPTION_REQUIRED` carry `success:false`; 403 `MODEL_RESTRICTED` carries `allowedModels`. */
const AiErrors = { ...Errors, 402: ErrorBody };

export const CatalogModel = Type.Object({
  id: Type.String(),
  name: Type.String(),
  provider: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  /** USD per million tokens. */
  inputCost: Type.Number(),
  outputCost: Type.Number(),
  contextWindow: Type.Integer(),
  available: Type.Boolean(),
});

export const AiHealth = Type.Object({
  status: Type.Union([Type.Literal('healthy'), Type.Literal('degraded')]),
  providers: Type.Object({ openrouter: Type.Boolean() }),
  timestamp: Timestamp,
});
export const AiHealthError = Type.Object({ status: Type.Literal('error'), error: Type.String() });

export const ModelList = Type.Object({
  models: Type.Array(CatalogModel),
  count: Type.Integer(),
  openrouter: Type.Boolean(),
  timestamp: Timestamp,
});
export const ProviderModelList = Type.Object({
  provider: Type.String(),
  models: Type.Array(CatalogModel),
  count: Type.Integer(),
  timestamp: Timestamp,
});
export const ProviderParams = Type.Object({ provider: Type.String({ minLength: 1, maxLength: 64 }) });

export const SelectModelBody = Type.Object(
  { taskType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false },
);
export const SelectedModel = Type.Object({
  model: Type.Object({ id: Type.String(), provider: Type.String() }),
  taskType: Type.String(),
  timestamp: Timestamp,
});

export const ChatMessage = Type.Object(
  { role: ChatRole, content: Type.String({ maxLength: 200_000 }) },
  { additionalProperties: false },
);
export const ChatBody = Type.Object(
  {
    messages: Type.Array(ChatMessage, { maxItems: 500 }),
    model: Type.Optional(ModelId),
    taskType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 200_000 })),
    algorithmMode: Type.Optional(Type.Boolean({ default: false })),
    /** Server-Sent Events in the OpenAI chunk format. */
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const ChatResponse = Type.Object({
  id: Type.String(),
  model: Type.String(),
  provider: Type.String(),
  message: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
  usage: Usage,
  timestamp: Timestamp,
});

export const EstimateCostBody = Type.Object(
  {
    messages: Type.Optional(Type.Array(ChatMessage, { maxItems: 500 })),
    prompt: Type.Optional(Type.String({ maxLength: 200_000 })),
    model: Type.Optional(ModelId),
    taskType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 200_000 })),
  },
  { additionalProperties: false },
);
export const CostEstimate = Type.Object({
  model: Type.String(),
  provider: Type.String(),
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  inputCost: Type.Number(),
  outputCost: Type.Number(),
  estimatedCost: Type.Number(),
  currency: Type.Literal('USD'),
  timestamp: Timestamp,
});

export const DemoModel = Type.Object({ id: Type.String(), name: Type.String(), provider: Type.String() });
export const DemoInfo = Type.Object({
  models: Type.Array(DemoModel),
  mode: Type.Literal('demo'),
  message: Type.String(),
});
export const DemoChatBody = Type.Object(
  {
    /** Checked by the service so that a missing one answers `Message required`. */
    message: Type.Optional(Type.String({ maxLength: 4000 })),
    model: Type.Optional(ModelId),
    mode: Type.Optional(Type.String({ maxLength: 64 })),
    conversation: Type.Optional(
      Type.Array(
        Type.Object(
          {
            role: Type.String({ maxLength: 32 }),
            content: Type.String({ maxLength: 100_000 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false },
);
export const DemoChatResponse = Type.Object({
  id: Type.String(),
  model: Type.String(),
  message: Type.String(),
  usage: Usage,
  done: Type.Literal(true),
});

export const CostPeriod = Type.Union([Type.Literal('7d'), Type.Literal('30d'), Type.Literal('mtd')]);
export const CostDashboardQuery = Type.Object({ period: Type.Optional(CostPeriod) });
/** `calls` count failed calls too (every provider attempt failed; they cost nothing); `avgCostPerCall` is over the calls served. */
export const CostDashboard = Type.Object({
  period: CostPeriod,
  summary: Type.Object({
    totalCost: Type.Number(),
    totalTokens: Type.Integer(),
    totalCalls: Type.Integer(),
    avgCostPerCall: Type.Number(),
  }),
  agents: Type.Array(
    Type.Object({
      name: Type.String(),
      tokens: Type.Integer(),
      cost: Type.Number(),
      calls: Type.Integer(),
      avgCostPerCall: Type.Number(),
      model: Type.String(),
    }),
  ),
  daily: Type.Array(Type.Object({ date: Type.String(), cost: Type.Number(), tokens: Type.Integer() })),
  modelBreakdown: Type.Array(Type.Object({ model: Type.String(), percent: Type.Number(), cost: Type.Number() })),
  isMockData: Type.Literal(false),
  plan: Type.String(),
  planMonthlyCost: Type.Number(),
  agentCount: Type.Integer(),
  activeAgents: Type.Integer(),
});

/** An agent id as usage rows hold it: a uuid, or `demo-chat`. */
const AgentRef = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' });
export const UsageQuery = Type.Object({
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366, default: 30 })),
  agentId: Type.Optional(AgentRef),
});
export const UsageTotals = Type.Object({
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  totalTokens: Type.Integer(),
  costUsd: Type.Number(),
  /** Every call, the failed ones included. */
  calls: Type.Integer(),
  /** Calls none of whose provider attempts served them (every retry and fallback failed): part of `calls`, no tokens, no cost. */
  failedCalls: Type.Integer(),
  turns: Type.Integer(),
  /** Prompt tokens read from and written to the providers' prompt caches (part of inputTokens). */
  cacheReadTokens: Type.Integer(),
  cacheWriteTokens: Type.Integer(),
});
const UsageScope = { days: Type.Integer(), agentId: Type.Union([Type.String(), Type.Null()]) };
export const UsageSummary = Type.Object({ ...UsageScope, usage: UsageTotals });
export const UsageByModel = Type.Object({
  ...UsageScope,
  models: Type.Array(Type.Object({ model: Type.String(), provider: Type.String(), ...UsageTotals.properties })),
});
export const UsageByAgent = Type.Object({ ...UsageScope, usage: UsageTotals, models: UsageByModel.properties.models });
export const UsageDaily = Type.Object({
  ...UsageScope,
  daily: Type.Array(Type.Object({ date: Type.String(), ...UsageTotals.properties })),
});
/** Tools the models called in their answers: `calls` the calls, `answers` the answers that called it, `lastUsed` the last day (UTC) one did. */
export const UsageTools = Type.Object({
  ...UsageScope,
  tools: Type.Array(
    Type.Object({ tool: Type.String(), calls: Type.Integer(), answers: Type.Integer(), lastUsed: Type.String() }),
  ),
  nextCursor: NextCursor,
});
/** Tool names are the agents' own, so the list grows without bound: it comes in pages. */
export const UsageToolsQuery = Type.Object({ ...UsageQuery.properties, ...PageQueryFields });
export const AgentIdParams = Type.Object({ agentId: AgentRef });

/** One provider call of a gateway call (a retry or a fallback is one more): its HTTP status (null: no answer), what came of it, how long it took. */
export const UsageCallAttempt = Type.Object({
  model: Type.String(),
  provider: Type.String(),
  status: Nullable(Type.Integer()),
  outcome: Type.Union([Type.Literal('served'), Type.Literal('failed')]),
  ms: Type.Integer(),
});
/** One AI call of the user's, as its usage row holds it: `failed` when no attempt served it (no tokens, no cost). */
export const UsageCall = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  agentId: Nullable(Type.String()),
  model: Type.String(),
  provider: Type.String(),
  outcome: Type.Union([Type.Literal('served'), Type.Literal('failed')]),
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  /** null: no price was known for the model. */
  costUsd: Nullable(Type.Number()),
  /** In the order they were made; empty for calls recorded before attempts were kept. */
  attempts: Type.Array(UsageCallAttempt),
});
/** The user's calls, newest first, in pages; `since` inclusive, `until` exclusive. */
export const UsageCallsQuery = Type.Object(
  {
    // A web user's calls are their hosted agents' (uuids) or their keys' own (no agent).
    agentId: Type.Optional(Uuid),
    outcome: Type.Optional(Type.Union([Type.Literal('served'), Type.Literal('failed')])),
    since: Type.Optional(IsoDate),
    until: Type.Optional(IsoDate),
    ...PageQueryFields,
  },
  { additionalProperties: false },
);
export const UsageCalls = Type.Object({ calls: Type.Array(UsageCall), nextCursor: NextCursor });

const ToolName = Type.String({ minLength: 1, maxLength: 128 });
/** A tool call of an earlier assistant turn; `arguments` is JSON text. */
const OpenAiToolCall = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 512 }),
    type: Type.Optional(Type.String({ maxLength: 32 })),
    function: Type.Object(
      { name: ToolName, arguments: Type.Optional(Type.String({ maxLength: 1_000_000 })) },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);
/** A function the model may call: its arguments' JSON Schema in `parameters`. */
const OpenAiTool = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 32 }),
    function: Type.Optional(
      Type.Object(
        {
          name: ToolName,
          description: Type.Optional(Type.String({ maxLength: 100_000 })),
          parameters: Type.Optional(Type.Object({}, { additionalProperties: true })),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
const OpenAiToolChoice = Type.Union([
  Type.Literal('auto'),
  Type.Literal('none'),
  Type.Literal('required'),
  Type.Object(
    {
      type: Type.String({ maxLength: 32 }),
      function: Type.Optional(Type.Object({ name: ToolName }, { additionalProperties: true })),
    },
    { additionalProperties: true },
  ),
]);

/** OpenAI-compatible surface for hosted agents: OpenAI clients send many optional fields, which are passed on or ignored. */
export const OpenAiChatBody = Type.Object(
  {
    model: Type.Optional(ModelId),
    messages: Type.Array(
      Type.Object(
        {
          role: Type.String({ minLength: 1, maxLength: 32 }),
          content: Type.Optional(
            Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true })), Type.Null()]),
          ),
          tool_calls: Type.Optional(Type.Array(OpenAiToolCall, { maxItems: 128 })),
          tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
    tools: Type.Optional(Type.Array(OpenAiTool, { maxItems: 512 })),
    tool_choice: Type.Optional(OpenAiToolChoice),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 200_000 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 200_000 })),
  },
  { additionalProperties: true },
);
export const OpenAiCompletion = Type.Object({}, { additionalProperties: true });
export const OpenAiModelList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({ id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() }),
  ),
});

/** Anthropic's Messages API body (Claude models): content blocks and their `cache_control` marks pass on; fields priced apart from tokens are left out. */
export const AnthropicMessagesBody = Type.Object(
  {
    model: ModelId,
    max_tokens: Type.Integer({ minimum: 1, maximum: 200_000 }),
    messages: Type.Array(
      Type.Object(
        {
          role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
          content: Type.Union([
            Type.String(),
            Type.Array(
              Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true }),
              { maxItems: 1000 },
            ),
          ]),
        },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
    system: Type.Optional(
      Type.Union([
        Type.String(),
        Type.Array(
          Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true }),
          { maxItems: 100 },
        ),
      ]),
    ),
    tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 512 })),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: true },
);
/** OpenAI's Responses API body: input items and content parts pass on; stateful and per-use-billed fields are refused or left out by the service. */
export const OpenAiResponsesBody = Type.Object(
  {
    model: ModelId,
    input: Type.Union([
      Type.String(),
      Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, maxItems: 1000 }),
    ]),
    instructions: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 16, maximum: 200_000 })),
    tools: Type.Optional(
      Type.Array(Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true }), {
        maxItems: 512,
      }),
    ),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: true },
);
/** OpenAI's embeddings body: a text, texts, a token array or token arrays. */
export const OpenAiEmbeddingsBody = Type.Object(
  {
    model: ModelId,
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1, maxItems: 2048 }),
      Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 300_000 }),
      Type.Array(Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 300_000 }), {
        minItems: 1,
        maxItems: 2048,
      }),
    ]),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096 })),
    user: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: true },
);
/** A passed-through provider's answer (a Messages message, a response, embeddings), as the provider sent it. */
export const ProviderAnswer = Type.Object({}, { additionalProperties: true });

export const WebhookReceipt = Type.Object({ received: Type.Literal(true), duplicate: Type.Boolean() });

// The /v1 routes answer agents on the backend surface (the agent listener), by the agent's own AI
// key, and users on the web surface by their API key (`Authorization: Bearer sk_…`, checked by the
// edge, which passes on no Authorization there), under the user's plan, budgets and rate limits.
export const aiRoutes = {
  health: route({
    method: 'GET',
    url: '/api/ai/health',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: 'backend-ai',
    summary: 'AI gateway health: whether the checked provider (openrouter) is reachable',
    schema: { headers: AiCallerHeaders, response: { 200: AiHealth, ...Errors, 503: AiHealthError } },
  }),
  models: route({
    method: 'GET',
    url: '/api/ai/models',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: 'backend-ai',
    summary: 'The model catalog with prices (USD per million tokens) and availability',
    schema: { headers: AiCallerHeaders, response: { 200: ModelList, ...Errors } },
  }),
  providerModels: route({
    method: 'GET',
    url: '/api/ai/models/:provider',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: 'backend-ai',
    summary: 'The models one provider of the chain serves',
    schema: { headers: AiCallerHeaders, params: ProviderParams, response: { 200: ProviderModelList, ...Errors } },
  }),
  selectModel: route({
    method: 'POST',
    url: '/api/ai/models/select',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: 'backend-ai',
    summary: 'The model the plan gets for a task type',
    schema: { headers: PlanHeaders, body: SelectModelBody, response: { 200: SelectedModel, ...AiErrors } },
  }),
  chat: route({
    method: 'POST',
    url: '/api/ai/chat',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: 'backend-ai',
    longLived: true,
    summary: 'Chat with an allowed model; falls back across providers; `stream: true` answers Server-Sent Events',
    schema: { headers: PlanHeaders, body: ChatBody, response: { 200: ChatResponse, ...AiErrors } },
  }),
  estimateCost: route({
    method: 'POST',
    url: '/api/ai/estimate-cost',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    rateLimit: 'backend-ai',
    summary: 'Estimated cost of a request (about 4 characters a token) on an allowed model',
    schema: { headers: PlanHeaders, body: EstimateCostBody, response: { 200: CostEstimate, ...AiErrors } },
  }),
  demoInfo: route({
    method: 'GET',
    url: '/api/demo/chat',
    service: 'ai',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Demo chat models (no sign-in)',
    schema: { response: { 200: DemoInfo, ...Errors } },
  }),
  demoChat: route({
    method: 'POST',
    url: '/api/demo/chat',
    service: 'ai',
    surfaces: ['web'],
    auth: 'none',
    rateLimit: 'web-demo-chat',
    summary: 'Demo chat without sign-in: never streamed, 1024 max tokens, daily spend cap',
    schema: { body: DemoChatBody, response: { 200: DemoChatResponse, ...Errors } },
  }),
  costDashboard: route({
    method: 'GET',
    url: '/api/dashboard/cost',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary: "The signed-in user's AI cost over a period, by agent, day and model",
    schema: { querystring: CostDashboardQuery, response: { 200: CostDashboard, ...Errors } },
  }),
  usageSummary: route({
    method: 'GET',
    url: '/api/usage/summary',
    service: 'ai',
    surfaces: ['web', 'backend'],
    auth: 'user-or-service',
    summary: "Usage totals over `days`: the signed-in user's (web), or of the `x-user-id` user when given (backend)",
    schema: { headers: AiCallerHeaders, querystring: UsageQuery, response: { 200: UsageSummary, ...Errors } },
  }),
  usageCalls: route({
    method: 'GET',
    url: '/api/usage/calls',
    service: 'ai',
    surfaces: ['web'],
    auth: 'user',
    summary:
      "The signed-in user's AI calls, newest first, served and failed, each with its provider attempts (retries and fallbacks: status, outcome, milliseconds); by `agentId`, `outcome` and `since`/`until`, in pages of `limit` (default 50, at most 100) from `cursor`",
    schema: { querystring: UsageCallsQuery, response: { 200: UsageCalls, ...Errors } },
  }),
  usageByAgent: route({
    method: 'GET',
    url: '/api/usage/by-agent/:agentId',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    summary: "One agent's usage over `days`, by model",
    schema: {
      headers: AiCallerHeaders,
      params: AgentIdParams,
      querystring: Type.Object({ days: UsageQuery.properties.days }),
      response: { 200: UsageByAgent, ...Errors },
    },
  }),
  usageByModel: route({
    method: 'GET',
    url: '/api/usage/by-model',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Usage over `days` by model',
    schema: { headers: AiCallerHeaders, querystring: UsageQuery, response: { 200: UsageByModel, ...Errors } },
  }),
  usageTools: route({
    method: 'GET',
    url: '/api/usage/tools',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    summary:
      'Tools the models called in their answers over `days`, by tool name, in pages of `limit` (default 50, at most 100) from `cursor` (a ranking by calls would shift under a walk as calls arrive)',
    schema: { headers: AiCallerHeaders, querystring: UsageToolsQuery, response: { 200: UsageTools, ...Errors } },
  }),
  usageDaily: route({
    method: 'GET',
    url: '/api/usage/daily',
    service: 'ai',
    surfaces: ['backend'],
    auth: 'service',
    summary: 'Usage over `days`, one entry a day (UTC)',
    schema: { headers: AiCallerHeaders, querystring: UsageQuery, response: { 200: UsageDaily, ...Errors } },
  }),
  stripeWebhook: route({
    method: 'POST',
    url: '/api/webhooks/stripe',
    service: 'ai',
    surfaces: ['web'],
    auth: 'none',
    summary: 'Stripe subscription events (signature-verified, idempotent by event id)',
    schema: { response: { 200: WebhookReceipt, ...Errors } },
  }),
  agentChatCompletions: route({
    method: 'POST',
    url: '/v1/chat/completions',
    service: 'ai',
    surfaces: ['backend', 'web'],
    auth: 'none',
    backendKey: false,
    forwardAuthorization: true,
    rateLimit: ['backend-agent-chat', 'web-user-ai'],
    longLived: true,
    summary: "OpenAI-compatible chat for hosted agents, authenticated by the agent's own AI key",
    schema: { body: OpenAiChatBody, response: { 200: OpenAiCompletion, ...AiErrors } },
  }),
  agentMessages: route({
    method: 'POST',
    url: '/v1/messages',
    service: 'ai',
    surfaces: ['backend', 'web'],
    auth: 'none',
    backendKey: false,
    forwardAuthorization: true,
    rateLimit: ['backend-agent-chat', 'web-user-ai'],
    longLived: true,
    summary:
      "Anthropic's Messages API (plain, or `stream: true` for its Server-Sent Events) for the plan's Claude models, `cache_control` passed on and prompt-cache reads and writes billed at their rates; the agent's AI key as `x-api-key` or a bearer",
    schema: { body: AnthropicMessagesBody, response: { 200: ProviderAnswer, ...AiErrors } },
  }),
  agentResponses: route({
    method: 'POST',
    url: '/v1/responses',
    service: 'ai',
    surfaces: ['backend', 'web'],
    auth: 'none',
    backendKey: false,
    forwardAuthorization: true,
    rateLimit: ['backend-agent-chat', 'web-user-ai'],
    longLived: true,
    summary:
      "OpenAI's Responses API (plain, or `stream: true` for its Server-Sent Events) for the plan's OpenAI models, stateless (`store: false`; `previous_response_id` refused), cached input billed at its rate",
    schema: { body: OpenAiResponsesBody, response: { 200: ProviderAnswer, ...AiErrors } },
  }),
  agentEmbeddings: route({
    method: 'POST',
    url: '/v1/embeddings',
    service: 'ai',
    surfaces: ['backend', 'web'],
    auth: 'none',
    backendKey: false,
    forwardAuthorization: true,
    rateLimit: ['backend-agent-chat', 'web-user-ai'],
    summary:
      "OpenAI's embeddings API for the OpenAI embedding models (every paid plan's), priced and budgeted like chat",
    schema: { body: OpenAiEmbeddingsBody, response: { 200: ProviderAnswer, ...AiErrors } },
  }),
  agentModels: route({
    method: 'GET',
    url: '/v1/models',
    service: 'ai',
    surfaces: ['backend', 'web'],
    auth: 'none',
    backendKey: false,
    forwardAuthorization: true,
    rateLimit: ['backend-agent-models', 'web-user-ai'],
    summary: "OpenAI-compatible model list of the agent's plan",
    schema: { response: { 200: OpenAiModelList, ...AiErrors } },
  }),
};
