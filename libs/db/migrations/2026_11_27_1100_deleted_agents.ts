import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// The ids of agents their owner deleted from the web, so deleting again answers as the first time
// did (the owner's own id: deleted:true) while another user's id stays a 404. Nothing else of the
// agent is kept here; its usage and cost rows stay where they are (billing).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('deleted_agents')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('deleted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('deleted_agents_user_idx').on('deleted_agents').column('user_id').execute();
  await ownedByUser(db, 'deleted_agents');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deleted_agents').ifExists().execute();
}
