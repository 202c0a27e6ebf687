// The outbound-email worker's side of a scheduled task's notice: reads the task and its owner across users (system connection).
import type { SystemDb } from '@agentyard/db/system';
import type { Mailer } from '../mailer.ts';
import { isSuppressed } from './outbound-email.ts';

/**
 * Tells a task's owner it paused itself at the failure limit, with the reason it recorded and
 * where to see its runs. A task deleted or switched back on meanwhile gets no mail.
 */
export async function sendScheduledTaskPausedMail(
  db: SystemDb,
  mailer: Mailer,
  settings: { publicBaseUrl: string },
  taskId: string,
): Promise<string> {
  const task = await db
    .selectFrom('scheduled_tasks')
    .innerJoin('users', 'users.id', 'scheduled_tasks.user_id')
    .select(['scheduled_tasks.name', 'scheduled_tasks.enabled', 'scheduled_tasks.paused_reason', 'users.email'])
    .where('scheduled_tasks.id', '=', taskId)
    .executeTakeFirst();
  if (!task || task.enabled || !task.paused_reason) return 'no longer paused';
  if (await isSuppressed(db, task.email)) return 'suppressed';
  const page = `${settings.publicBaseUrl.replace(/\/$/, '')}/schedules`;
  await mailer.send({
    to: task.email,
    subject: `Your scheduled prompt "${task.name.slice(0, 80)}" has paused itself`,
    text: `Your scheduled prompt "${task.name}" stopped running: ${task.paused_reason}\n\nSee its runs and switch it back on here:\n${page}\n`,
  });
  return 'sent';
}
