import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// A firing asks whether its task's previous run is still unfinished (its agent's turn goes on, or
// a run waits for it): a partial index holds only those few rows, so the question is a lookup
// whatever the history a task has.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index scheduled_task_runs_unfinished_idx on scheduled_task_runs (task_id, due_at) where finished_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists scheduled_task_runs_unfinished_idx`.execute(db);
}
