import type { SystemDb } from '@agentyard/db/system';
import type { Queue } from '@agentyard/queue';
import { frequencyMs } from './frequency.ts';
import { heartbeatTimerId, scheduleHeartbeat, scheduleTask, timerIds, type DeliveryPolicy } from './timers.ts';

/**
 * Makes the queue's job schedulers match the database after a start: a scheduler for every enabled
 * task and heartbeat that lacks one, none for a disabled or deleted one. Existing schedulers are
 * left alone, so nothing fires twice and nothing is lost across a restart.
 */
export async function reconcileTimers(db: SystemDb, queues: { prompts: Queue; heartbeats: Queue }, policy: DeliveryPolicy) {
  const report = { tasksAdded: 0, tasksRemoved: 0, heartbeatsAdded: 0, heartbeatsRemoved: 0 };

  const taskTimers = await timerIds(queues.prompts);
  const tasks = await db.selectFrom('scheduled_tasks').select(['id', 'cron_schedule']).where('enabled', '=', true).execute();
  const enabledTasks = new Set(tasks.map((t) => t.id));
  for (const task of tasks) {
    if (taskTimers.has(task.id)) continue;
    await scheduleTask(queues.prompts, { id: task.id, cronSchedule: task.cron_schedule }, policy);
    report.tasksAdded++;
  }
  for (const id of taskTimers) {
    if (enabledTasks.has(id)) continue;
    await queues.prompts.removeJobScheduler(id);
    report.tasksRemoved++;
  }

  const beatTimers = await timerIds(queues.heartbeats);
  const beats = await db.selectFrom('heartbeats').select(['user_id', 'agent_ref', 'frequency', 'next_heartbeat']).where('enabled', '=', true).execute();
  const enabledBeats = new Set<string>();
  for (const beat of beats) {
    const id = heartbeatTimerId(beat.user_id, beat.agent_ref);
    enabledBeats.add(id);
    if (beatTimers.has(id)) continue;
    const everyMs = frequencyMs(beat.frequency);
    const firstAt = beat.next_heartbeat && beat.next_heartbeat.getTime() > Date.now() ? beat.next_heartbeat : new Date(Date.now() + everyMs);
    await scheduleHeartbeat(queues.heartbeats, { userId: beat.user_id, agentRef: beat.agent_ref }, everyMs, firstAt, policy);
    report.heartbeatsAdded++;
  }
  for (const id of beatTimers) {
    if (enabledBeats.has(id)) continue;
    await queues.heartbeats.removeJobScheduler(id);
    report.heartbeatsRemoved++;
  }
  return report;
}
