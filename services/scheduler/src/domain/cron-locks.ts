import { lockForTransaction, sql, type Database, type Transaction } from '@agentyard/db';
import { cronTimerId, type CronTimer } from './timers.ts';

// A timer's job scheduler (an expression in a zone) is changed under a transaction lock of the
// timer's own, held to commit: a request removing the scheduler of a timer's last task and one
// adding a task on it cannot interleave, and the check after the lock sees every committed task.

/** Locks the timers in one order, so two requests swapping expressions do not deadlock. */
export async function lockCrons(trx: Transaction<Database>, ...timers: CronTimer[]): Promise<void> {
  for (const id of [...new Set(timers.map(cronTimerId))].sort()) {
    await lockForTransaction(trx, `scheduled-cron:${id}`);
  }
}

/** Whether any user's enabled task fires on the timer (across users: a security definer). */
export async function cronInUse(trx: Transaction<Database>, timer: CronTimer): Promise<boolean> {
  const { rows } = await sql<{
    in_use: boolean;
  }>`select scheduled_timer_in_use(${timer.cronSchedule}, ${timer.timezone}) as in_use`.execute(trx);
  return rows[0]?.in_use === true;
}
