import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// Admin rights follow a verified email, so a verification must reach the caches that hold a user's
// admin state (the AI gateway's hosted-agent lookups) as an email change does.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists users_cache_notice on users`.execute(db);
  await sql`create trigger users_cache_notice after update of email, email_verified_at or delete on users
    for each row execute function notify_cache_invalidation()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists users_cache_notice on users`.execute(db);
  await sql`create trigger users_cache_notice after update of email or delete on users
    for each row execute function notify_cache_invalidation()`.execute(db);
}
