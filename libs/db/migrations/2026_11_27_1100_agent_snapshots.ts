import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Snapshots of an agent's state disk and applied configuration (issue 30). The archive lives in the
// snapshot store (a directory, later object storage) under the row's id; the row says what it is,
// how large and its SHA-256, so a list, a quota or a download never reads the store.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('agent_snapshots')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('label', 'text', (c) => c.check(sql`char_length(label) <= 100`))
    .addColumn('reason', 'text', (c) => c.notNull().check(sql`reason in ('manual', 'scheduled', 'before-update', 'before-repair', 'before-reset', 'before-restore', 'import')`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'ready', 'failed')`))
    .addColumn('size_bytes', 'bigint')
    .addColumn('sha256', 'text')
    .addColumn('openclaw_version', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('agent_snapshots_agent_created_idx').on('agent_snapshots').columns(['agent_id', 'created_at']).execute();
  await db.schema.createIndex('agent_snapshots_user_idx').on('agent_snapshots').column('user_id').execute();
  await ownedByUser(db, 'agent_snapshots');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('agent_snapshots').ifExists().execute();
}
