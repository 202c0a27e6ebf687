import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// A user's plan is their active subscription's (admins: network), answered by one function; the
// users.plan column was written by nothing (always `free`), so it goes. The cache notice on users
// named that column, so it is recreated on the columns that remain relevant (email).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists users_cache_notice on users`.execute(db);
  await db.schema.alterTable('users').dropColumn('plan').execute();
  await sql`create trigger users_cache_notice after update of email or delete on users
    for each row execute function notify_cache_invalidation()`.execute(db);
  // The plan lookup reads a user's subscriptions by status, newest first.
  await db.schema.createIndex('subscriptions_user_status_updated_idx').on('subscriptions').columns(['user_id', 'status', 'updated_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('subscriptions_user_status_updated_idx').ifExists().execute();
  await sql`drop trigger if exists users_cache_notice on users`.execute(db);
  await db.schema.alterTable('users').addColumn('plan', 'text', (c) => c.notNull().defaultTo('free')).execute();
  await sql`create trigger users_cache_notice after update of plan, email or delete on users
    for each row execute function notify_cache_invalidation()`.execute(db);
}
