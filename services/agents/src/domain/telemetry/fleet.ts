import { decodeCursor, pageOf, sql, type Database, type Transaction } from '@agentyard/db';
import { shownFailure } from '../agents/agent-views.ts';

/**
 * Mission control (issue 32): the user's fleet read in their own transaction. Every table read
 * here is row-level secured by owner, so the caller sees their agents and their agents' runs only;
 * a bus message to another user's agent is not an edge (its far end is not one of the nodes).
 */

const HOUR_MS = 3_600_000;

export async function fleetGraph(trx: Transaction<Database>, windowHours: number, now = new Date()) {
  const since = new Date(now.getTime() - windowHours * HOUR_MS);
  const agents = await trx
    .selectFrom('agents as a')
    .select([
      'a.id',
      'a.name',
      'a.status',
      'a.last_error',
      // The engine's last health report since the container started: an older one speaks of a container gone.
      sql<
        string | null
      >`(select e.detail from agent_events e where e.agent_id = a.id and e.kind = 'health' and (a.started_at is null or e.at >= a.started_at) order by e.at desc limit 1)`.as(
        'health',
      ),
      sql<string>`(select count(*) from agent_events e where e.agent_id = a.id and e.kind = 'restarted' and e.at >= ${since})`.as(
        'restarts',
      ),
    ])
    .orderBy('a.created_at')
    .orderBy('a.id')
    .execute();
  const ids = new Set(agents.map((a) => a.id));
  const traffic = await trx
    .selectFrom('bus_messages')
    .select([
      'from_agent_id',
      'to_agent_id',
      sql<string>`count(*)`.as('messages'),
      sql<string>`count(delivered_at)`.as('delivered'),
      sql<string>`count(*) filter (where delivered_at is null and delivery_error is not null)`.as('failed'),
      sql<Date>`max(created_at)`.as('last_at'),
    ])
    .where('created_at', '>=', since)
    .groupBy(['from_agent_id', 'to_agent_id'])
    .execute();
  return {
    windowHours,
    nodes: agents.map((a) => ({
      id: a.id,
      name: a.name,
      status: a.status,
      health: a.health,
      restarts: Number(a.restarts),
      lastError: shownFailure(a.last_error),
    })),
    edges: traffic
      .filter((e) => ids.has(e.from_agent_id) && ids.has(e.to_agent_id))
      .map((e) => ({
        from: e.from_agent_id,
        to: e.to_agent_id,
        messages: Number(e.messages),
        delivered: Number(e.delivered),
        failed: Number(e.failed),
        lastAt: new Date(e.last_at).toISOString(),
      })),
  };
}

export type TraceKind = 'chat' | 'scheduled' | 'heartbeat' | 'bus' | 'channel';
export interface TraceFilter {
  agentId?: string;
  kind?: TraceKind;
  limit: number;
  cursor?: string;
}

interface TraceRow {
  id: string;
  agent_id: string;
  kind: TraceKind;
  status: string;
  at: string;
  duration_ms: number | null;
  tokens: number | null;
  cost_usd: string | null;
}

/** The agent's model calls as the AI gateway saw and billed them, as runs of `kind`: a turn on a channel or any other. */
const modelCalls = (kind: 'chat' | 'channel') =>
  sql`select ${sql.lit(`${kind}:`)} || u.id as id, u.agent_id, ${sql.lit(kind)} as kind, case when u.outcome = 'failed' then 'failed' else 'completed' end as status, u.occurred_at as started, null::int as duration_ms, u.total_tokens as tokens, u.cost_usd::text as cost_usd
    from usage_events u where u.agent_id is not null and u.agent_id <> '' and u.channel is ${kind === 'channel' ? sql`not null` : sql`null`}`;

/**
 * Each source of runs as one select of the same columns; `at` is the run's start as the page
 * position (UTC, microseconds). Model calls are `channel` when the AI gateway saw the turn come in on
 * one of the agent's channels (`usage_events.channel`), else `chat`; a bus delivery is its sender's
 * run; a heartbeat is its last wake (the scheduler keeps no history of them).
 */
const SOURCES: Record<TraceKind, ReturnType<typeof sql>> = {
  chat: modelCalls('chat'),
  channel: modelCalls('channel'),
  scheduled: sql`select 'scheduled:' || r.id, t.agent_id::text, 'scheduled', r.status, coalesce(r.started_at, r.due_at),
      case when r.finished_at is null or r.started_at is null then null else (extract(epoch from (r.finished_at - r.started_at)) * 1000)::int end, r.tokens, r.cost_usd::text
    from scheduled_task_runs r join scheduled_tasks t on t.id = r.task_id`,
  heartbeat: sql`select 'heartbeat:' || h.agent_id || ':' || (extract(epoch from h.last_heartbeat) * 1000000)::int8, h.agent_id::text, 'heartbeat',
      case when h.last_error is null then 'delivered' else 'failed' end, h.last_heartbeat, null::int, null::int, null::text
    from heartbeats h where h.agent_id is not null and h.last_heartbeat is not null`,
  bus: sql`select 'bus:' || b.message_id, b.from_agent_id::text, 'bus',
      case when b.delivered_at is not null then 'delivered' when b.delivery_error is not null then 'failed' else 'pending' end, b.created_at,
      case when b.delivered_at is null then null else (extract(epoch from (b.delivered_at - b.created_at)) * 1000)::int end, null::int, null::text
    from bus_messages b`,
};

/** A bad cursor, as the route reports it. */
export class TraceCursorError extends Error {}

/** A page of the fleet's runs, newest first, by keyset on (start, id) across every source. */
export async function fleetTraces(trx: Transaction<Database>, filter: TraceFilter) {
  const position = filter.cursor === undefined ? null : decodeCursor(filter.cursor, 'text');
  if (filter.cursor !== undefined && !position) throw new TraceCursorError();
  const kinds = filter.kind ? [filter.kind] : (Object.keys(SOURCES) as TraceKind[]);
  const union = sql.join(
    kinds.map((kind) => sql`(${SOURCES[kind]})`),
    sql` union all `,
  );
  const { rows } = await sql<TraceRow>`
    select x.id, x.agent_id, x.kind, x.status, to_char(x.started at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, x.duration_ms, x.tokens, x.cost_usd
    from (${union}) as x(id, agent_id, kind, status, started, duration_ms, tokens, cost_usd)
    where x.agent_id in (select id::text from agents)
      ${filter.agentId ? sql`and x.agent_id = ${filter.agentId}` : sql``}
      ${position ? sql`and (x.started, x.id) < (${position.at}::timestamptz, ${position.id})` : sql``}
    order by x.started desc, x.id desc
    limit ${filter.limit + 1}`.execute(trx);
  const page = pageOf(rows, filter.limit, (row) => ({ at: row.at, id: row.id }));
  return {
    traces: page.rows.map((r) => ({
      id: r.id,
      agentId: r.agent_id,
      kind: r.kind,
      status: r.status,
      startedAt: new Date(r.at).toISOString(),
      durationMs: r.duration_ms === null ? null : Math.max(0, r.duration_ms),
      tokens: r.tokens,
      costUsd: r.cost_usd === null ? null : Number(r.cost_usd),
    })),
    nextCursor: page.nextCursor,
  };
}
