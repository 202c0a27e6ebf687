import { sql, type Database, type Transaction } from '@agentyard/db';
import { shownFailure } from '../agents/agent-views.ts';

/** The lineage of the user's agents: each clone under the agent it was cloned from, by the snapshot it came from. */
export async function colonyTree(trx: Transaction<Database>) {
  const agents = await trx
    .selectFrom('agents')
    .select(['id', 'name', 'status', 'created_at', 'cloned_from_agent_id', 'cloned_from_snapshot_id'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const children = new Map<string, string[]>();
  for (const a of agents)
    if (a.cloned_from_agent_id)
      children.set(a.cloned_from_agent_id, [...(children.get(a.cloned_from_agent_id) ?? []), a.id]);
  return {
    action: 'tree' as const,
    // A root is an original, or a clone whose source is gone: the tree starts again from it.
    roots: agents.filter((a) => !a.cloned_from_agent_id || !names.has(a.cloned_from_agent_id)).map((a) => a.id),
    agents: agents.map((a) => ({
      id: a.id,
      name: a.name,
      status: a.status,
      createdAt: a.created_at.toISOString(),
      parentId: a.cloned_from_agent_id,
      parentName: a.cloned_from_agent_id ? (names.get(a.cloned_from_agent_id) ?? null) : null,
      snapshotId: a.cloned_from_snapshot_id,
      children: children.get(a.id) ?? [],
    })),
  };
}

/** Each agent's health: status, the engine's last health report, restarts, its last exit, last error and memory. */
export async function colonyDiagnostics(trx: Transaction<Database>) {
  const { rows } = await sql<{
    id: string;
    name: string;
    status: string;
    last_error: string | null;
    health: string | null;
    restarts: string;
    exit_at: Date | null;
    exit_kind: string | null;
    exit_code: number | null;
    oom_killed: boolean | null;
    memory_bytes: string | null;
    sampled_at: Date | null;
  }>`
    select a.id, a.name, a.status, a.last_error,
      (select e.detail from agent_events e where e.agent_id = a.id and e.kind = 'health' and (a.started_at is null or e.at >= a.started_at) order by e.at desc limit 1) as health,
      (select count(*) from agent_events e where e.agent_id = a.id and e.kind = 'restarted') as restarts,
      x.at as exit_at, x.kind as exit_kind, x.exit_code, x.oom_killed,
      m.memory_bytes, m.sampled_at
    from agents a
    left join lateral (select at, kind, exit_code, oom_killed from agent_events e where e.agent_id = a.id and e.kind in ('exit', 'oom') order by e.at desc limit 1) x on true
    left join lateral (select memory_bytes, sampled_at from agent_metric_samples s where s.agent_id = a.id order by s.sampled_at desc limit 1) m on true
    order by a.created_at, a.id`.execute(trx);
  return {
    action: 'diagnostics' as const,
    agents: rows.map((r) => ({
      id: r.id,
      name: r.name,
      status: r.status,
      health: r.health,
      restarts: Number(r.restarts),
      lastError: shownFailure(r.last_error),
      lastExit: r.exit_at
        ? { at: r.exit_at.toISOString(), kind: r.exit_kind!, exitCode: r.exit_code, oomKilled: r.oom_killed === true }
        : null,
      memoryBytes: r.memory_bytes === null ? null : Number(r.memory_bytes),
      sampledAt: r.sampled_at ? r.sampled_at.toISOString() : null,
    })),
  };
}
