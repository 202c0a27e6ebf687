import { currentPlans, sql } from '@agentyard/db';
import type { SystemDb } from '@agentyard/db/system';
import { parseMinIntervals } from '../firing-limits.ts';

/** Days the runs are kept, by plan (SCHEDULER_RUN_RETENTION_DAYS, `plan:days,...`; `*` for the others). */
export const parseRetentionDays = parseMinIntervals;

const DAY_MS = 86_400_000;

/**
 * The daily purge: every run row (scheduled prompts' and heartbeats') older than its owner's plan keeps them goes. Only owners with a row
 * past the shortest retention are looked at, their plans read in one query; one delete per retention.
 */
export async function purgeOldRuns(
  db: SystemDb,
  retention: Map<string, number>,
  activeStatuses: readonly string[],
  now = new Date(),
): Promise<{ deleted: number }> {
  const daysOf = (plan: string) => retention.get(plan) ?? retention.get('*') ?? 30;
  const shortest = Math.min(...retention.values());
  const before = new Date(now.getTime() - shortest * DAY_MS);
  const owners = await db
    .selectFrom('scheduled_task_runs')
    .select('user_id')
    .where('due_at', '<', before)
    .union(db.selectFrom('heartbeat_runs').select('user_id').where('due_at', '<', before))
    .execute();
  if (!owners.length) return { deleted: 0 };
  const ids = owners.map((o) => o.user_id);
  const plans = await currentPlans(db, ids, { activeStatuses });
  const byDays = new Map<number, string[]>();
  for (const id of ids) {
    const days = daysOf(plans.get(id) ?? 'free');
    byDays.set(days, [...(byDays.get(days) ?? []), id]);
  }
  let deleted = 0;
  for (const [days, users] of byDays) {
    const cutoff = new Date(now.getTime() - days * DAY_MS);
    for (const table of ['scheduled_task_runs', 'heartbeat_runs'] as const) {
      const result =
        await sql`delete from ${sql.table(table)} where user_id = any(${users}::uuid[]) and due_at < ${cutoff}`.execute(
          db,
        );
      deleted += Number(result.numAffectedRows ?? 0n);
    }
  }
  return { deleted };
}
