import type { Database, Transaction } from '@agentyard/db';

/** The agent's container events, newest first (the caller's transaction: its own rows only). */
export async function agentEvents(trx: Transaction<Database>, agentId: string, limit: number) {
  const rows = await trx
    .selectFrom('agent_events')
    .select(['id', 'at', 'kind', 'expected', 'exit_code', 'oom_killed', 'detail', 'log_tail'])
    .where('agent_id', '=', agentId)
    .orderBy('at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    kind: r.kind,
    expected: r.expected,
    exitCode: r.exit_code,
    oomKilled: r.oom_killed,
    detail: r.detail,
    logTail: r.log_tail,
  }));
}
