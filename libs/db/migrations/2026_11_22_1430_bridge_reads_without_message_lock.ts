import type { Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// Inbox reads insert one marker per returned message. The foreign key to bridge_messages made each
// insert lock its message row (FOR KEY SHARE) — the same hot rows for every reader — and cost more
// than the read itself at 1 M messages; markers are only ever inserted for ids selected from
// bridge_messages in the same statement, so the key guarded nothing. Its index served the cascade only.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('bridge_reads').dropConstraint('bridge_reads_message_id_fkey').execute();
  await db.schema.dropIndex('bridge_reads_message_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('bridge_reads_message_idx').on('bridge_reads').column('message_id').execute();
  await db.schema.alterTable('bridge_reads')
    .addForeignKeyConstraint('bridge_reads_message_id_fkey', ['message_id'], 'bridge_messages', ['id'], (c) => c.onDelete('cascade'))
    .execute();
}
