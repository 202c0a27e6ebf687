import { Type } from 'typebox';
import { Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { NextCursor, PageCursor, PageLimit } from './pagination.ts';
import { route, type RouteSpec } from './route.ts';

// ── Mission control (issue 32): the signed-in user's own fleet of agents, seen whole ──

/** How far back the graph counts bus traffic and restarts, in hours (default 24, at most 30 days). */
export const FleetWindowQuery = Type.Object(
  {
    windowHours: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 720,
        default: 24,
        description: 'hours back to count bus traffic and restarts (default 24)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One agent of the fleet as a node: its status now and what the container engine last said of its health. */
export const FleetNode = Type.Object({
  id: Uuid,
  name: Type.String(),
  status: Type.String(),
  /** The engine's last health report since the container started (`healthy`, `unhealthy`, `starting`); null when none came. */
  health: Nullable(Type.String()),
  /** Restarts by the watchdog within the window. */
  restarts: Type.Integer({ minimum: 0 }),
  lastError: Nullable(Type.String()),
});

/** Bus messages from one of the user's agents to another within the window. */
export const FleetEdge = Type.Object({
  from: Uuid,
  to: Uuid,
  messages: Type.Integer({ minimum: 1 }),
  delivered: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
  lastAt: IsoDate,
});

export const FleetGraph = Type.Object({
  windowHours: Type.Integer(),
  nodes: Type.Array(FleetNode),
  edges: Type.Array(FleetEdge),
});

export const TRACE_KINDS = ['chat', 'scheduled', 'heartbeat', 'bus', 'channel'] as const;
export const TraceKind = Type.Union([
  Type.Literal('chat'),
  Type.Literal('scheduled'),
  Type.Literal('heartbeat'),
  Type.Literal('bus'),
  Type.Literal('channel'),
]);

export const FleetTracesQuery = Type.Object(
  {
    agentId: Type.Optional(Uuid),
    kind: Type.Optional(TraceKind),
    limit: Type.Optional(PageLimit(50, 100)),
    cursor: Type.Optional(PageCursor),
  },
  { additionalProperties: false },
);

/** One run of one agent: a model call (`channel` when one of its channels started the turn, else `chat`), a scheduled prompt's firing, a heartbeat or a bus delivery. */
export const FleetTrace = Type.Object({
  id: Type.String(),
  agentId: Uuid,
  kind: TraceKind,
  status: Type.String(),
  startedAt: IsoDate,
  durationMs: Nullable(Type.Integer({ minimum: 0 })),
  tokens: Nullable(Type.Integer({ minimum: 0 })),
  costUsd: Nullable(Type.Number()),
});

export const FleetTraces = Type.Object({ traces: Type.Array(FleetTrace), nextCursor: NextCursor });

/** An agent's share of this month's AI spend and of the plan's fee. */
export const FleetAgentCost = Type.Object({
  agentId: Uuid,
  name: Type.String(),
  aiCostUsd: Type.Number(),
  calls: Type.Integer({ minimum: 0 }),
  /** Of `calls`, those every provider attempt failed (nothing billed). */
  failedCalls: Type.Integer({ minimum: 0 }),
  tokens: Type.Integer({ minimum: 0 }),
  /** The plan's monthly fee split evenly over the user's agents, in USD. */
  planShareUsd: Type.Number(),
  totalUsd: Type.Number(),
  /** What the user's own limit on this agent leaves this month; null: no limit set. */
  limitLeftUsd: Nullable(Type.Number()),
});

export const FleetCosts = Type.Object({
  /** The month counted, `YYYY-MM` (UTC). */
  month: Type.String(),
  plan: Type.String(),
  planFeeUsd: Type.Number(),
  agents: Type.Array(FleetAgentCost),
  totals: Type.Object({
    aiCostUsd: Type.Number(),
    /** AI spend of calls made without one of the user's agents (their own key, direct calls). */
    unattributedAiCostUsd: Type.Number(),
    planFeeUsd: Type.Number(),
    totalUsd: Type.Number(),
  }),
  budget: Type.Object({
    includedUsd: Type.Number(),
    creditsUsd: Type.Number(),
    monthlyLimitUsd: Nullable(Type.Number()),
    spentUsd: Type.Number(),
    /** What the AI gateway still admits this month: allowance and credits, bounded by the user's own limit. */
    leftUsd: Type.Number(),
  }),
});

const owners = { surfaces: ['web'], auth: 'user', rateLimit: 'web-mission-control' } satisfies Partial<RouteSpec>;

export const missionControlRoutes = {
  fleetGraph: route({
    ...owners,
    method: 'GET',
    url: '/api/mission-control/fleet/graph',
    service: 'agents',
    summary:
      "The caller's agents as nodes (status, health, restarts) and the agent-to-agent bus traffic between them as edges, over `windowHours`",
    schema: { querystring: FleetWindowQuery, response: { 200: FleetGraph, ...Errors } },
  }),
  fleetTraces: route({
    ...owners,
    method: 'GET',
    url: '/api/mission-control/fleet/traces',
    service: 'agents',
    summary:
      "Recent runs across the caller's agents (model calls, scheduled prompts, heartbeats, bus deliveries), newest first, by cursor; `agentId` and `kind` filter",
    schema: { querystring: FleetTracesQuery, response: { 200: FleetTraces, ...Errors } },
  }),
  fleetCosts: route({
    ...owners,
    method: 'GET',
    url: '/api/mission-control/fleet/costs',
    service: 'ai',
    summary: "This month's AI cost per agent plus its share of the plan fee, the totals, and the AI budget left",
    schema: { response: { 200: FleetCosts, ...Errors } },
  }),
};
