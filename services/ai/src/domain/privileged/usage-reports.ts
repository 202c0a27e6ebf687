import { sql, type Database, type Kysely } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { AiErrors } from '../../errors.ts';

/** Whose usage and since when: the last `days` days (UTC, today included), optionally one user (`user_ref`) and one agent. */
export interface UsageScope {
  days: number;
  userRef: string | null;
  agentId: string | null;
}

const DAY_MS = 86_400_000;
const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const sinceOf = (days: number, now: Date) => isoDay(new Date(now.getTime() - (days - 1) * DAY_MS));

const TOTALS = [
  sql<number>`coalesce(sum(input_tokens), 0)::int8`.as('inputTokens'),
  sql<number>`coalesce(sum(output_tokens), 0)::int8`.as('outputTokens'),
  sql<number>`coalesce(sum(total_tokens), 0)::int8`.as('totalTokens'),
  sql<string>`coalesce(sum(cost_usd), 0)`.as('costUsd'),
  sql<number>`coalesce(sum(calls), 0)::int8`.as('calls'),
  sql<number>`coalesce(sum(failed_calls), 0)::int8`.as('failedCalls'),
  sql<number>`coalesce(sum(turns), 0)::int8`.as('turns'),
  sql<number>`coalesce(sum(cache_read_tokens), 0)::int8`.as('cacheReadTokens'),
  sql<number>`coalesce(sum(cache_write_tokens), 0)::int8`.as('cacheWriteTokens'),
];

type Totals = {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: string;
  calls: number;
  failedCalls: number;
  turns: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
};
const totals = <T extends Totals>(row: T) => ({ ...row, costUsd: Number(Number(row.costUsd).toFixed(6)) });

interface Filterable<Q> {
  where(column: 'day' | 'user_ref' | 'agent_id', op: '=' | '>=', value: string): Q;
}

/** A query of a daily aggregate (usage or tool calls) narrowed to the scope. */
function inScope<Q extends Filterable<Q>>(query: Q, scope: UsageScope, now: Date): Q {
  let scoped = query.where('day', '>=', sinceOf(scope.days, now));
  if (scope.userRef) scoped = scoped.where('user_ref', '=', scope.userRef);
  if (scope.agentId) scoped = scoped.where('agent_id', '=', scope.agentId);
  return scoped;
}

/** Any connection: the system one (backend callers), or a web user's transaction, where row-level security narrows it too. */
const scoped = (db: Kysely<Database>, scope: UsageScope, now: Date) =>
  inScope(db.selectFrom('usage_daily'), scope, now);

export async function usageSummary(db: Kysely<Database>, scope: UsageScope, now = new Date()) {
  return totals(await scoped(db, scope, now).select(TOTALS).executeTakeFirstOrThrow());
}

export async function usageByModel(db: SystemDb, scope: UsageScope, now = new Date()) {
  const rows = await scoped(db, scope, now)
    .select(['model', 'provider', ...TOTALS])
    .groupBy(['model', 'provider'])
    .orderBy(sql`sum(cost_usd)`, 'desc')
    .orderBy('model')
    .execute();
  return rows.map(totals);
}

export async function usageDaily(db: SystemDb, scope: UsageScope, now = new Date()) {
  const rows = await scoped(db, scope, now)
    .select([sql<string>`to_char(day, 'YYYY-MM-DD')`.as('date'), ...TOTALS])
    .groupBy('day')
    .execute();
  const byDate = new Map(rows.map((r) => [r.date, totals(r)]));
  const empty = {
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    costUsd: 0,
    calls: 0,
    failedCalls: 0,
    turns: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  return Array.from({ length: scope.days }, (_, i) => {
    const date = sinceOf(scope.days - i, now);
    return byDate.get(date) ?? { date, ...empty };
  });
}

// A tools page ends at a tool name; the cursor is that name, base64url (only what this code wrote decodes back to itself).
const toolCursor = (tool: string) => Buffer.from(tool, 'utf8').toString('base64url');
function toolAfter(cursor: string): string {
  const tool = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!tool || toolCursor(tool) !== cursor) throw AiErrors.invalidCursor();
  return tool;
}

/**
 * One page of the tools models called in answers, by name (a name is one group, so pages never
 * repeat or skip one while calls arrive): `calls` the calls, `answers` the answers that called it,
 * `lastUsed` its last day.
 */
export async function usageByTool(
  db: SystemDb,
  scope: UsageScope,
  page: { limit: number; cursor?: string },
  now = new Date(),
) {
  let query = inScope(db.selectFrom('usage_tools_daily'), scope, now);
  if (page.cursor !== undefined) query = query.where('tool', '>', toolAfter(page.cursor));
  const rows = await query
    .select([
      'tool',
      sql<number>`sum(calls)::int8`.as('calls'),
      sql<number>`sum(answers)::int8`.as('answers'),
      sql<string>`to_char(max(day), 'YYYY-MM-DD')`.as('lastUsed'),
    ])
    .groupBy('tool')
    .orderBy('tool')
    .limit(page.limit + 1)
    .execute();
  const tools = rows
    .slice(0, page.limit)
    .map((row) => ({ ...row, calls: Number(row.calls), answers: Number(row.answers) }));
  return { tools, nextCursor: rows.length > page.limit ? toolCursor(tools.at(-1)!.tool) : null };
}
