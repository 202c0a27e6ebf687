import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// A user API key's own limits on its AI calls per minute (issue 33), set by its owner within the
// plan's caps; null: none. The AI gateway reads them by the key id the edge signs (cached in
// memory), so a change, or the key's deletion, sends the cache notice `api_keys:<key id>` when it commits.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('api_key_minute_limits')
    .addColumn('key_id', 'uuid', (c) => c.primaryKey().references('api_keys.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('requests_per_minute', 'integer', (c) => c.check(sql`requests_per_minute > 0`))
    .addColumn('tokens_per_minute', 'integer', (c) => c.check(sql`tokens_per_minute > 0`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('api_key_minute_limits_user_idx').on('api_key_minute_limits').column('user_id').execute();
  await ownedByUser(db, 'api_key_minute_limits');
  await sql`
    create function notify_api_key_minute_limits() returns trigger
    language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('agentyard_cache', 'api_keys:' || old.key_id::text);
      else
        perform pg_notify('agentyard_cache', 'api_keys:' || new.key_id::text);
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`create trigger api_key_minute_limits_cache_notice after insert or update or delete on api_key_minute_limits
    for each row execute function notify_api_key_minute_limits()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_key_minute_limits').ifExists().execute();
  await sql`drop function if exists notify_api_key_minute_limits()`.execute(db);
}
