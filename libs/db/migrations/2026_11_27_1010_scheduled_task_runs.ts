import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Every firing of a scheduled task is a row: delivered, failed, missed, caught up late, skipped for
// an overlap or for spent credits, or run by hand. (task_id, due_at) is unique, so a repeated batch
// or a retry updates its firing's row and never adds a second one. The task keeps the last run's
// status and how many runs in a row failed (it pauses itself at a limit, `paused_reason` says why).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('scheduled_task_runs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('task_id', 'uuid', (c) => c.notNull().references('scheduled_tasks.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('manual', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'delivered', 'answered', 'failed', 'missed', 'ran-late', 'skipped-overlap', 'skipped-no-credits')`),
    )
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('reply', 'text')
    .addColumn('tokens', 'integer')
    .addColumn('cost_usd', sql`numeric(14, 6)`)
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addUniqueConstraint('scheduled_task_runs_task_due_key', ['task_id', 'due_at'])
    .execute();
  // Pages of one task's runs, newest due time first; the purge finds old rows by due time.
  await sql`create index scheduled_task_runs_page_idx on scheduled_task_runs (task_id, due_at desc, id desc)`.execute(db);
  await sql`create index scheduled_task_runs_due_idx on scheduled_task_runs (due_at)`.execute(db);
  await ownedByUser(db, 'scheduled_task_runs');

  await db.schema.alterTable('scheduled_tasks')
    .addColumn('last_status', 'text')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('paused_reason', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scheduled_tasks').dropColumn('last_status').dropColumn('consecutive_failures').dropColumn('paused_reason').execute();
  await db.schema.dropTable('scheduled_task_runs').ifExists().execute();
}
