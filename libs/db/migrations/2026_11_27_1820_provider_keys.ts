import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Users' own provider keys (BYOK, issue 33): one per provider, sealed with the platform keyring
// (bound to the user and the provider), write-only through the API; the hint is at most the key's
// last four characters. The AI gateway keeps which users hold keys in memory, so a change sends
// `provider_keys:<user id>` on the cache channel when it commits.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('provider_keys')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('openrouter', 'gemini', 'groq', 'anthropic', 'openai')`))
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('key_hint', 'text', (c) => c.notNull().check(sql`char_length(key_hint) <= 4`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('provider_keys_pkey', ['user_id', 'provider'])
    .execute();
  await ownedByUser(db, 'provider_keys');
  await sql`
    create function notify_provider_keys() returns trigger
    language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('agentyard_cache', 'provider_keys:' || old.user_id::text);
      else
        perform pg_notify('agentyard_cache', 'provider_keys:' || new.user_id::text);
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`create trigger provider_keys_cache_notice after insert or update or delete on provider_keys
    for each row execute function notify_provider_keys()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('provider_keys').ifExists().execute();
  await sql`drop function if exists notify_provider_keys()`.execute(db);
}
