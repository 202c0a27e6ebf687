import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// Services that keep rows of these tables in memory (the ai service's subscription and agent-key
// lookups) learn of every change through a notice `<table>:<id>` on the channel agentyard_cache,
// sent when the changing transaction commits. Only the columns those lookups read count for agents
// and users; any change to a subscription counts.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function notify_cache_invalidation() returns trigger
    language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('agentyard_cache', tg_table_name || ':' || old.id::text);
      else
        perform pg_notify('agentyard_cache', tg_table_name || ':' || new.id::text);
        if tg_op = 'UPDATE' and old.id is distinct from new.id then
          perform pg_notify('agentyard_cache', tg_table_name || ':' || old.id::text);
        end if;
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`create trigger subscriptions_cache_notice after insert or update or delete on subscriptions
    for each row execute function notify_cache_invalidation()`.execute(db);
  await sql`create trigger agents_cache_notice after update of ai_key_hash, user_id, ai_provider or delete on agents
    for each row execute function notify_cache_invalidation()`.execute(db);
  await sql`create trigger users_cache_notice after update of plan, email or delete on users
    for each row execute function notify_cache_invalidation()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists users_cache_notice on users`.execute(db);
  await sql`drop trigger if exists agents_cache_notice on agents`.execute(db);
  await sql`drop trigger if exists subscriptions_cache_notice on subscriptions`.execute(db);
  await sql`drop function if exists notify_cache_invalidation()`.execute(db);
}
