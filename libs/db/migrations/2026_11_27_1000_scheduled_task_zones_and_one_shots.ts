import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code. Role names are the platform's fixed role names.
const APP = 'agentyard_app';
const SYSTEM = 'agentyard_system';

// Scheduled prompts gain a time zone (their cron is read in it), one-shot tasks (`run_at`, no cron)
// and the policies for runs missed while something was down and for runs falling due while the
// previous turn is still going. A firing's job scheduler is now per (expression, zone), so the
// "is it still in use" question asked before removing one names the zone too.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scheduled_tasks')
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('run_at', 'timestamptz')
    .addColumn('missed_run_policy', 'text', (c) => c.notNull().defaultTo('skip').check(sql`missed_run_policy in ('skip', 'run-once')`))
    .addColumn('overlap_policy', 'text', (c) => c.notNull().defaultTo('skip').check(sql`overlap_policy in ('skip', 'queue')`))
    .execute();
  await sql`alter table scheduled_tasks alter column cron_schedule drop not null`.execute(db);
  await sql`alter table scheduled_tasks add constraint scheduled_tasks_cron_xor_run_at check ((cron_schedule is null) <> (run_at is null))`.execute(db);
  await sql`
    create function scheduled_timer_in_use(p_cron_schedule text, p_timezone text) returns boolean
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return exists (select 1 from scheduled_tasks where cron_schedule = p_cron_schedule and timezone = p_timezone and enabled);
    end
    $$`.execute(db);
  await sql`grant execute on function scheduled_timer_in_use(text, text) to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists scheduled_timer_in_use(text, text)`.execute(db);
  await sql`delete from scheduled_tasks where cron_schedule is null`.execute(db);
  await sql`alter table scheduled_tasks drop constraint if exists scheduled_tasks_cron_xor_run_at`.execute(db);
  await sql`alter table scheduled_tasks alter column cron_schedule set not null`.execute(db);
  await db.schema.alterTable('scheduled_tasks').dropColumn('timezone').dropColumn('run_at').dropColumn('missed_run_policy').dropColumn('overlap_policy').execute();
}
