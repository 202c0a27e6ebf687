import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code. Role names are the platform's fixed role names.
const APP = 'agentyard_app';
const SYSTEM = 'agentyard_system';
const OWNER = 'agentyard_owner';

// Scheduled prompts fire by cron expression, not one job per task: a firing's batches claim the
// due tasks of that expression (`claimed_by`, until `claim_expires_at`) with FOR UPDATE SKIP LOCKED.
// fillfactor 70 leaves room on each page so the claim and outcome updates stay HOT (no indexed
// column changes); the partial index finds an expression's enabled tasks.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scheduled_tasks')
    .addColumn('claimed_by', 'text')
    .addColumn('claim_expires_at', 'timestamptz')
    .execute();
  await sql`alter table scheduled_tasks set (fillfactor = 70)`.execute(db);
  await sql`create index scheduled_tasks_enabled_cron_idx on scheduled_tasks (cron_schedule) where enabled`.execute(db);
  // Whether any user's enabled task still fires on an expression: a user's request that disables or
  // deletes a task removes the expression's job scheduler only when none does. Row-level security
  // hides other users' tasks from that request, hence a security definer answering one boolean. It
  // runs as the owner role, which row-level security binds too (FORCE): a policy of the owner role's
  // own lets it read every task (it owns the table; the runtime role gains nothing).
  await sql`create policy scheduled_tasks_owner_reads on scheduled_tasks for select to ${sql.id(OWNER)} using (true)`.execute(db);
  await sql`
    create function scheduled_cron_in_use(p_cron_schedule text) returns boolean
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return exists (select 1 from scheduled_tasks where cron_schedule = p_cron_schedule and enabled);
    end
    $$`.execute(db);
  await sql`grant execute on function scheduled_cron_in_use(text) to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists scheduled_cron_in_use(text)`.execute(db);
  await sql`drop policy if exists scheduled_tasks_owner_reads on scheduled_tasks`.execute(db);
  await sql`drop index if exists scheduled_tasks_enabled_cron_idx`.execute(db);
  await sql`alter table scheduled_tasks reset (fillfactor)`.execute(db);
  await db.schema.alterTable('scheduled_tasks').dropColumn('claimed_by').dropColumn('claim_expires_at').execute();
}
