import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Trading-service conversation threads started through the relay, each bound to the user who
// started it, as jobs are (2026_11_25_0130): a thread of the shared platform account is continued
// only by that user; anyone else naming it gets 404 and the trading service never hears of it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('trader_threads')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('thread_id', 'text', (c) => c.notNull().check(sql`char_length(thread_id) between 1 and 200`))
    .addColumn('platform_key', 'boolean', (c) => c.notNull())
    .addColumn('last_used_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('trader_threads_pkey', ['user_id', 'thread_id'])
    .execute();
  await db.schema.createIndex('trader_threads_user_used_idx').on('trader_threads').columns(['user_id', 'last_used_at']).execute();
  await ownedByUser(db, 'trader_threads');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('trader_threads').ifExists().execute();
}
