import { Type } from 'typebox';
import { ErrorBody, Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { route, type RouteSpec } from './route.ts';

// ── Swarms (issue 32): a named group of the caller's own agents that a message goes to as one run ──

/** Members a swarm may have, and swarms a user may keep, per plan (free and unknown plans: solo's). */
export const SWARM_LIMITS: Record<string, { swarms: number; members: number; runsPerDay: number }> = {
  solo: { swarms: 1, members: 2, runsPerDay: 20 },
  collective: { swarms: 5, members: 3, runsPerDay: 100 },
  label: { swarms: 20, members: 10, runsPerDay: 500 },
  network: { swarms: 100, members: 50, runsPerDay: 5000 },
};
export const swarmLimitsOf = (plan: string) => SWARM_LIMITS[plan] ?? SWARM_LIMITS.solo!;

const SwarmName = Type.String({ minLength: 1, maxLength: 64 });
const Members = Type.Array(Uuid, { minItems: 1, maxItems: 50, uniqueItems: true });

export const SwarmParams = Type.Object({ id: Uuid });
export const SwarmRunParams = Type.Object({ id: Uuid, runId: Uuid });
export const CreateSwarmBody = Type.Object({ name: SwarmName, agentIds: Members }, { additionalProperties: false });
export const UpdateSwarmBody = Type.Object(
  { name: Type.Optional(SwarmName), agentIds: Type.Optional(Members) },
  { additionalProperties: false, minProperties: 1 },
);

export const Swarm = Type.Object({
  id: Uuid,
  name: Type.String(),
  agentIds: Type.Array(Uuid),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});
export const SwarmList = Type.Object({ swarms: Type.Array(Swarm) });
export const SwarmEnvelope = Type.Object({ swarm: Swarm });
export const SwarmDeleted = Type.Object({ deleted: Type.Literal(true), id: Uuid });

/**
 * How a run treats its members' answers: `broadcast` hands the message to every member's hooks (as a
 * scheduled prompt is) and records that each took it; `all` collects every member's answer; `first`
 * settles at the first answer and cancels the turns still running.
 */
export const SwarmRunMode = Type.Union([Type.Literal('broadcast'), Type.Literal('first'), Type.Literal('all')]);
export const StartSwarmRunBody = Type.Object(
  { message: Type.String({ minLength: 1, maxLength: 8000 }), mode: SwarmRunMode },
  { additionalProperties: false },
);

/** `delivered`: a broadcast's member took the message (its answer is not collected); `skipped`: not sent (not running, spend exhausted, another answered first). */
export const SwarmMemberStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('delivered'),
  Type.Literal('answered'),
  Type.Literal('failed'),
  Type.Literal('skipped'),
]);
export const SwarmRunStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
]);

export const SwarmRunMember = Type.Object({
  agentId: Uuid,
  status: SwarmMemberStatus,
  answer: Nullable(Type.String()),
  error: Nullable(Type.String()),
  tokens: Nullable(Type.Integer({ minimum: 0 })),
  /** The agent's model spend between the turn's start and end (its usage rows); null until it ends. */
  costUsd: Nullable(Type.Number()),
  startedAt: Nullable(IsoDate),
  finishedAt: Nullable(IsoDate),
});

export const SwarmRun = Type.Object({
  id: Uuid,
  swarmId: Uuid,
  mode: SwarmRunMode,
  message: Type.String(),
  status: SwarmRunStatus,
  createdAt: IsoDate,
  finishedAt: Nullable(IsoDate),
  members: Type.Array(SwarmRunMember),
});
export const SwarmRunStarted = Type.Object({ run: SwarmRun });

const owners = {
  service: 'agents',
  surfaces: ['web'],
  auth: 'user',
  rateLimit: 'web-swarms',
} satisfies Partial<RouteSpec>;

export const swarmRoutes = {
  listSwarms: route({
    ...owners,
    method: 'GET',
    url: '/api/swarms',
    summary: "The caller's swarms",
    schema: { response: { 200: SwarmList, ...Errors } },
  }),
  createSwarm: route({
    ...owners,
    method: 'POST',
    url: '/api/swarms',
    summary:
      "A named group of the caller's own agents (another user's agent: 404); the plan limits swarms and members (429 `SWARM_LIMIT`)",
    schema: { body: CreateSwarmBody, response: { 201: SwarmEnvelope, ...Errors } },
  }),
  getSwarm: route({
    ...owners,
    method: 'GET',
    url: '/api/swarms/:id',
    summary: 'One swarm',
    schema: { params: SwarmParams, response: { 200: SwarmEnvelope, ...Errors } },
  }),
  updateSwarm: route({
    ...owners,
    method: 'PATCH',
    url: '/api/swarms/:id',
    summary: 'Renames the swarm or replaces its members (validated as on create)',
    schema: { params: SwarmParams, body: UpdateSwarmBody, response: { 200: SwarmEnvelope, ...Errors } },
  }),
  deleteSwarm: route({
    ...owners,
    method: 'DELETE',
    url: '/api/swarms/:id',
    summary: 'Deletes the swarm and its runs',
    schema: { params: SwarmParams, response: { 200: SwarmDeleted, ...Errors } },
  }),
  startSwarmRun: route({
    ...owners,
    rateLimit: ['web-swarms', 'web-swarm-runs'],
    method: 'POST',
    url: '/api/swarms/:id/runs',
    summary:
      "Sends the message to every member as a turn (a job runs it; a member not running, or every member when the AI allowance and credits are spent, is skipped with the reason) and collects each answer into the run: 202 with the pending run; 409 for a swarm without members, 429 `SWARM_RUN_LIMIT` past the plan's runs a day",
    schema: { params: SwarmParams, body: StartSwarmRunBody, response: { 202: SwarmRunStarted, ...Errors } },
  }),
  getSwarmRun: route({
    ...owners,
    method: 'GET',
    url: '/api/swarms/:id/runs/:runId',
    summary: "The run: each member's status, answer, tokens and cost",
    schema: { params: SwarmRunParams, response: { 200: SwarmRunStarted, ...Errors } },
  }),
};

// ── Colony: the lineage and health of the caller's agents ──

export const ColonyQuery = Type.Object(
  {
    action: Type.Union([Type.Literal('tree'), Type.Literal('diagnostics'), Type.Literal('soul')], {
      description: 'tree | diagnostics (soul: 501)',
    }),
  },
  { additionalProperties: false },
);

/** One agent in the lineage: cloned from `snapshotId` of `parentId`, or an original (both null). */
export const ColonyTreeNode = Type.Object({
  id: Uuid,
  name: Type.String(),
  status: Type.String(),
  createdAt: IsoDate,
  /** The agent it was cloned from; kept when that agent is gone since (then `parentName` is null). */
  parentId: Nullable(Uuid),
  parentName: Nullable(Type.String()),
  snapshotId: Nullable(Uuid),
  children: Type.Array(Uuid),
});
export const ColonyTree = Type.Object({
  action: Type.Literal('tree'),
  roots: Type.Array(Uuid),
  agents: Type.Array(ColonyTreeNode),
});

export const ColonyDiagnostic = Type.Object({
  id: Uuid,
  name: Type.String(),
  status: Type.String(),
  health: Nullable(Type.String()),
  /** The watchdog's restarts of it, ever recorded. */
  restarts: Type.Integer({ minimum: 0 }),
  lastError: Nullable(Type.String()),
  /** The last exit or OOM kill the engine reported, with when. */
  lastExit: Nullable(
    Type.Object({ at: IsoDate, kind: Type.String(), exitCode: Nullable(Type.Integer()), oomKilled: Type.Boolean() }),
  ),
  /** Memory of its container at the last sample, and when sampled; null when never sampled. */
  memoryBytes: Nullable(Type.Integer({ minimum: 0 })),
  sampledAt: Nullable(IsoDate),
});
export const ColonyDiagnostics = Type.Object({
  action: Type.Literal('diagnostics'),
  agents: Type.Array(ColonyDiagnostic),
});

export const colonyRoutes = {
  colonyStatus: route({
    method: 'GET',
    url: '/api/colony/status',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: 'web-colony',
    summary:
      "`tree`: which of the caller's agents was cloned from which snapshot of which; `diagnostics`: each one's health, restarts, last error and memory. `soul`: 501 NOT_SUPPORTED (docs/fleet.md)",
    schema: {
      querystring: ColonyQuery,
      response: { 200: Type.Union([ColonyTree, ColonyDiagnostics]), 501: ErrorBody, ...Errors },
    },
  }),
};
