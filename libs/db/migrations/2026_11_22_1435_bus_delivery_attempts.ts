import type { Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// How many times delivery to the recipient's webhook was tried, next to its outcome (delivered_at or delivery_error).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('bus_messages').addColumn('delivery_attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('bus_messages').dropColumn('delivery_attempts').execute();
}
