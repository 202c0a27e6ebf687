import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Each agent's previous configurations (the last 10 kept), written before every save or
// restore of its configuration, so its owner can go back. They hold the platform's document and
// the agent's model, never a secret (those are sealed on the agent's row and never in a config).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('agent_config_backups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('config', 'jsonb', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .execute();
  await db.schema.createIndex('agent_config_backups_agent_created_idx').on('agent_config_backups').columns(['agent_id', 'created_at']).execute();
  await ownedByUser(db, 'agent_config_backups');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('agent_config_backups').ifExists().execute();
}
