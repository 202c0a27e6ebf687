import { lockForTransaction, sql, type Database, type Transaction } from '@agentyard/db';

// A cron expression's job scheduler is changed under a transaction lock of the expression's own,
// held to commit: a request removing the scheduler of an expression's last task and one adding a
// task on it cannot interleave, and the check after the lock sees every committed task.

/** Locks the expressions in one order, so two requests swapping expressions do not deadlock. */
export async function lockCrons(trx: Transaction<Database>, ...cronSchedules: string[]): Promise<void> {
  for (const cron of [...new Set(cronSchedules)].sort()) {
    await lockForTransaction(trx, `scheduled-cron:${cron}`);
  }
}

/** Whether any user's enabled task fires on the expression (across users: a security definer). */
export async function cronInUse(trx: Transaction<Database>, cronSchedule: string): Promise<boolean> {
  const { rows } = await sql<{ in_use: boolean }>`select scheduled_cron_in_use(${cronSchedule}) as in_use`.execute(trx);
  return rows[0]?.in_use === true;
}
