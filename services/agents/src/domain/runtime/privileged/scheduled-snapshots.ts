import type { SystemDb } from '@agentyard/db/system';
import { PLANS, snapshotLimitsOf } from '@agentyard/proto-schemas';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import type { AgentRow } from '../../agents/agent-views.ts';
import {
  recordSnapshot,
  SCHEDULED_SNAPSHOT_JOB,
  scheduledSnapshotJobId,
  snapshotBytesOf,
  type ScheduledSnapshotJob,
} from '../snapshots.ts';
import { type AgentSnapshotOptions, beyondNewest, captureOrFail, hasState, keepNewest } from './snapshot-capture.ts';
import { loadAgent } from './lifecycle-status.ts';

/** Agents whose state a daily snapshot keeps: any that has a state disk and is not being made or failed. */
const SCHEDULED_STATUSES = ['running', 'active', 'suspended', 'stopped'] as const;

/** Since when an agent's state cannot have changed (it has not run since), or null while it runs or may. */
const stillSince = (agent: AgentRow): Date | null => {
  if (agent.status === 'stopped') return new Date(agent.updated_at);
  if (agent.status === 'suspended' && agent.hibernation === 'stopped' && agent.suspended_at)
    return new Date(agent.suspended_at);
  return null;
};

/** Agents with state whose plan keeps scheduled snapshots and that have none newer than `since`. */
const dueForScheduled = (db: SystemDb, since: Date) =>
  db
    .selectFrom('agents')
    .select('id')
    .where('status', 'in', [...SCHEDULED_STATUSES])
    .where(
      'plan',
      'in',
      PLANS.filter((plan) => snapshotLimitsOf(plan).scheduledKept > 0),
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('agent_snapshots as s')
            .select('s.id')
            .whereRef('s.agent_id', '=', 'agents.id')
            .where('s.reason', '=', 'scheduled')
            .where('s.status', '<>', 'failed')
            .where('s.created_at', '>', since),
        ),
      ),
    )
    .execute();

/**
 * Enqueues the daily snapshot of every agent with state whose plan keeps scheduled snapshots and
 * that has none newer than a period (`everyMs`); one job per agent and period (its id).
 */
export async function sweepScheduled(db: SystemDb, queues: QueueSet, everyMs: number): Promise<string> {
  const due = await dueForScheduled(db, new Date(Date.now() - everyMs));
  for (const { id } of due) {
    await queues.add(QUEUES.lifecycle, SCHEDULED_SNAPSHOT_JOB, { agentId: id } satisfies ScheduledSnapshotJob, {
      jobId: scheduledSnapshotJobId(id, everyMs),
      attempts: 3,
      backoff: { type: 'exponential', delay: 5000 },
      // Kept for two periods: the id stops a second job for the same period.
      removeOnComplete: { age: Math.ceil((2 * everyMs) / 1000) },
      removeOnFail: { age: Math.ceil((2 * everyMs) / 1000) },
    });
  }
  return `${due.length} due`;
}

/**
 * An agent's daily snapshot (the sweep's job): taken unless its plan keeps none, its state cannot
 * have changed since its newest ready snapshot (it has not run since), or the owner's snapshots
 * would still fill the plan's quota once this agent's oldest scheduled ones beyond the plan's
 * number are gone. After it, only the plan's newest scheduled snapshots of the agent are kept.
 */
export async function takeScheduled(options: AgentSnapshotOptions, agentId: string): Promise<string> {
  const { db, log } = options;
  return options.exclusive(agentId, async () => {
    const agent = await loadAgent(db, agentId);
    if (!agent || !(SCHEDULED_STATUSES as readonly string[]).includes(agent.status))
      return 'skipped: no agent with state';
    if (!(await hasState(options.driver, agentId))) return 'skipped: no state yet';
    const { scheduledKept, quotaBytes } = snapshotLimitsOf(agent.plan);
    if (scheduledKept === 0) return 'skipped: the plan keeps no scheduled snapshots';
    const still = stillSince(agent);
    if (still) {
      const newer = await db
        .selectFrom('agent_snapshots')
        .select('id')
        .where('agent_id', '=', agentId)
        .where('status', '=', 'ready')
        .where('created_at', '>=', still)
        .executeTakeFirst();
      if (newer) return `skipped: unchanged since snapshot ${newer.id}`;
    }
    const leaving = await beyondNewest(db, agentId, 'scheduled', scheduledKept - 1);
    const used =
      (await snapshotBytesOf(db, agent.user_id)) - leaving.reduce((sum, s) => sum + Number(s.size_bytes ?? 0), 0);
    if (used >= quotaBytes) {
      log.warn(
        { agentId, usedBytes: used, quotaBytes },
        'scheduled snapshot skipped: the owner is at the snapshot quota',
      );
      return 'skipped: quota reached';
    }
    const row = await recordSnapshot(db, agent, 'scheduled');
    await captureOrFail(options, agent, row);
    await keepNewest(options, agentId, 'scheduled', scheduledKept);
    return `taken ${row.id}`;
  });
}
