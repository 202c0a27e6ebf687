import { Type } from 'typebox';
import { Errors, IsoDate, Nullable, Uuid } from './common.ts';
import { route } from './route.ts';

// ── What happened to an agent's container (issue 29: the watchdog) ─────────────────────────────
export const AgentEventKind = Type.Union([
  Type.Literal('exit'),
  Type.Literal('oom'),
  Type.Literal('health'),
  Type.Literal('restarted'),
  Type.Literal('crash-loop'),
  Type.Literal('recycled'),
]);
/**
 * One event of an agent's container, as the engine reported it (`exit`, `oom`, `health`), or what the
 * watchdog did about it (`restarted`, `crash-loop`). `expected`: an exit the platform asked for (a
 * stop, a rebuild). `logTail`: its last lines of output when it exited, secrets redacted.
 */
export const AgentEvent = Type.Object({
  id: Uuid,
  at: IsoDate,
  kind: AgentEventKind,
  expected: Type.Boolean(),
  exitCode: Nullable(Type.Integer()),
  oomKilled: Type.Boolean(),
  detail: Nullable(Type.String()),
  logTail: Type.Array(Type.String()),
});
export const AgentEventsParams = Type.Object({ id: Uuid });
export const AgentEventsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  },
  { additionalProperties: false },
);
export const AgentEvents = Type.Object({ agentId: Uuid, events: Type.Array(AgentEvent) });

export const agentWatchdogRoutes = {
  agentEvents: route({
    method: 'GET',
    url: '/api/agents/:id/events',
    service: 'agents',
    surfaces: ['web'],
    auth: 'user',
    rateLimit: ['web-gateway', 'web-agent-workspace'],
    summary:
      "The agent's container events (exits, OOM kills, health) and the watchdog's restarts, newest first (`limit`, default 50)",
    schema: { params: AgentEventsParams, querystring: AgentEventsQuery, response: { 200: AgentEvents, ...Errors } },
  }),
};
