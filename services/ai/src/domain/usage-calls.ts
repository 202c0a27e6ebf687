import { sql, type Database, type Kysely } from '@agentyard/db';
import type { Static } from 'typebox';
import type { UsageCallAttempt, UsageCallsQuery } from '@agentyard/proto-schemas';
import { AiErrors } from '../errors.ts';

type Filters = Omit<Static<typeof UsageCallsQuery>, 'limit' | 'cursor'>;
type Attempt = Static<typeof UsageCallAttempt>;

// A page ends at a row: its time in epoch microseconds (a Date would drop the database's microseconds) and its id, base64url.
const callCursor = (micros: string, id: string) => Buffer.from(`${micros}.${id}`, 'utf8').toString('base64url');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
function callAfter(cursor: string): { micros: string; id: string } {
  const [micros = '', id = '', ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
  if (rest.length || !/^[0-9]{1,18}$/.test(micros) || !UUID.test(id) || callCursor(micros, id) !== cursor)
    throw AiErrors.invalidCursor();
  return { micros, id };
}

/** Only the attempt's known fields reach the owner, whatever else a row's detail may come to hold. */
const attemptsOf = (detail: { attempts: Record<string, unknown>[] } | null): Attempt[] =>
  (detail?.attempts ?? []).map((a) => ({
    model: String(a.model),
    provider: String(a.provider),
    status: typeof a.status === 'number' ? a.status : null,
    outcome: a.outcome === 'served' ? 'served' : 'failed',
    ms: typeof a.ms === 'number' ? Math.round(a.ms) : 0,
  }));

/**
 * One page of the caller's AI calls, newest first, each with its provider attempts. `db` is the
 * user's row-level-security transaction: another user's agent id finds nothing.
 */
export async function usageCalls(db: Kysely<Database>, filters: Filters, page: { limit: number; cursor?: string }) {
  if (filters.since && filters.until && Date.parse(filters.since) >= Date.parse(filters.until))
    throw AiErrors.emptyRange();
  let query = db.selectFrom('usage_events');
  if (filters.agentId) query = query.where('agent_id', '=', filters.agentId);
  if (filters.outcome) query = query.where('outcome', '=', filters.outcome);
  if (filters.since) query = query.where('occurred_at', '>=', new Date(filters.since));
  if (filters.until) query = query.where('occurred_at', '<', new Date(filters.until));
  if (page.cursor !== undefined) {
    const after = callAfter(page.cursor);
    query = query.where(
      sql<boolean>`(occurred_at, id) < (timestamptz 'epoch' + ${after.micros}::int8 * interval '1 microsecond', ${after.id}::uuid)`,
    );
  }
  const rows = await query
    .select([
      'id',
      'occurred_at',
      sql<string>`(extract(epoch from occurred_at) * 1000000)::int8::text`.as('micros'),
      'agent_id',
      'model',
      'provider',
      'outcome',
      'input_tokens',
      'output_tokens',
      'cost_usd',
      'detail',
    ])
    .orderBy('occurred_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const shown = rows.slice(0, page.limit);
  const calls = shown.map((row) => ({
    id: row.id,
    at: new Date(row.occurred_at).toISOString(),
    agentId: row.agent_id || null,
    model: row.model,
    provider: row.provider,
    outcome: row.outcome,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    attempts: attemptsOf(row.detail),
  }));
  const last = shown.at(-1);
  return { calls, nextCursor: rows.length > page.limit && last ? callCursor(last.micros, last.id) : null };
}
