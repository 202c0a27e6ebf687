import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// A model call an agent made for a turn one of its channels started (a Telegram message, issue 32)
// names that channel, so mission control shows it as a `channel` run; null: any other call. The
// added column keeps the table's row-level security as it is.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('usage_events')
    .addColumn('channel', 'text', (c) => c.check(sql`channel ~ '^[a-z][a-z0-9-]{0,31}$'`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('usage_events').dropColumn('channel').execute();
}
