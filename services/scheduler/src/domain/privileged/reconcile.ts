import type { SystemDb } from '@agentyard/db/system';
import type { Queue } from '@agentyard/queue';
import { frequencyMs } from '../frequency.ts';
import { cronInUse, lockCrons } from '../cron-locks.ts';
import {
  cronTimerId,
  heartbeatTimerId,
  RUN_PURGE_JOB,
  scheduleCron,
  scheduleHeartbeat,
  scheduleOneShot,
  timers,
  type DeliveryPolicy,
} from '../timers.ts';

/**
 * Makes the queue's job schedulers match the database after a start: a scheduler for every cron
 * expression of an enabled task and for every enabled heartbeat that lacks one, none for what no
 * enabled task or heartbeat uses any more (including the per-task schedulers of earlier versions).
 * Existing schedulers are left alone, so nothing fires twice and nothing is lost across a restart.
 */
export async function reconcileTimers(
  db: SystemDb,
  queues: { prompts: Queue; heartbeats: Queue },
  policy: DeliveryPolicy,
) {
  const report = { cronsAdded: 0, cronsRemoved: 0, oneShotsQueued: 0, heartbeatsAdded: 0, heartbeatsRemoved: 0 };

  const cronTimers = await timers(queues.prompts);
  const crons = await db
    .selectFrom('scheduled_tasks')
    .select(['cron_schedule', 'timezone'])
    .distinct()
    .where('enabled', '=', true)
    .where('cron_schedule', 'is not', null)
    .execute();
  const inUse = new Set<string>();
  for (const row of crons) {
    const timer = { cronSchedule: row.cron_schedule!, timezone: row.timezone };
    inUse.add(cronTimerId(timer));
    if (cronTimers.has(cronTimerId(timer))) continue;
    await scheduleCron(queues.prompts, timer, policy);
    report.cronsAdded++;
  }
  for (const [id, timer] of cronTimers) {
    if (inUse.has(id) || id === RUN_PURGE_JOB) continue;
    // Under the timer's lock, checked again: a task added on it since the read above keeps it.
    const removed = await db.transaction().execute(async (trx) => {
      if (timer && cronTimerId(timer) === id) {
        await lockCrons(trx, timer);
        if (await cronInUse(trx, timer)) return false;
      }
      return queues.prompts.removeJobScheduler(id);
    });
    if (removed) report.cronsRemoved++;
  }
  // One-shot tasks still ahead of their run: their delayed job again (same id, so never twice).
  const oneShots = await db
    .selectFrom('scheduled_tasks')
    .select(['id', 'run_at'])
    .where('enabled', '=', true)
    .where('run_at', 'is not', null)
    .execute();
  for (const task of oneShots) {
    await scheduleOneShot(queues.prompts, task.id, task.run_at!, policy);
    report.oneShotsQueued++;
  }

  const beatTimers = await timers(queues.heartbeats);
  const beats = await db
    .selectFrom('heartbeats')
    .select(['user_id', 'agent_ref', 'frequency', 'next_heartbeat'])
    .where('enabled', '=', true)
    .execute();
  const enabledBeats = new Set<string>();
  for (const beat of beats) {
    const id = heartbeatTimerId(beat.user_id, beat.agent_ref);
    enabledBeats.add(id);
    if (beatTimers.has(id)) continue;
    const everyMs = frequencyMs(beat.frequency);
    const firstAt =
      beat.next_heartbeat && beat.next_heartbeat.getTime() > Date.now()
        ? beat.next_heartbeat
        : new Date(Date.now() + everyMs);
    await scheduleHeartbeat(
      queues.heartbeats,
      { userId: beat.user_id, agentRef: beat.agent_ref },
      everyMs,
      firstAt,
      policy,
    );
    report.heartbeatsAdded++;
  }
  for (const id of beatTimers.keys()) {
    if (enabledBeats.has(id)) continue;
    await queues.heartbeats.removeJobScheduler(id);
    report.heartbeatsRemoved++;
  }
  return report;
}
