import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too).

export async function up(db: Kysely<any>): Promise<void> {
  // One saved agent configuration per user; absent means "the defaults of the user's plan".
  await db.schema.createTable('agent_configs')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('config', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await ownedByUser(db, 'agent_configs');

  await db.schema.createTable('config_backups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('config', 'jsonb', (c) => c.notNull())
    // clock_timestamp(): several backups in one transaction still order by when each was taken.
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .execute();
  await db.schema.createIndex('config_backups_user_idx').on('config_backups').columns(['user_id', 'created_at']).execute();
  await ownedByUser(db, 'config_backups');

  await db.schema.createTable('devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'approved', 'denied', 'revoked')`))
    .addColumn('first_seen', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('devices_user_idx').on('devices').columns(['user_id', 'status']).execute();
  await ownedByUser(db, 'devices');

  await db.schema.createTable('workflows')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .execute();
  await db.schema.createIndex('workflows_user_idx').on('workflows').columns(['user_id', 'updated_at']).execute();
  await ownedByUser(db, 'workflows');

  await db.schema.createTable('workflow_nodes')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // Creation order: nodes written in one transaction share now(), so a sequence orders them.
    .addColumn('seq', 'bigserial', (c) => c.notNull())
    .addColumn('workflow_id', 'uuid', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('trigger', 'action', 'condition', 'output')`))
    .addColumn('config', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('position', 'text', (c) => c.notNull().defaultTo('{"x":0,"y":0}'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('workflow_nodes_workflow_idx').on('workflow_nodes').columns(['workflow_id', 'seq']).execute();
  await ownedByUser(db, 'workflow_nodes');

  await db.schema.createTable('scheduled_tasks')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('cron_schedule', 'text', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('last_run', 'timestamptz')
    .addColumn('next_run', 'timestamptz')
    // The due time of the last delivered firing: a repeated job for it is not delivered twice.
    .addColumn('last_delivered_due', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'timestamptz')
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('scheduled_tasks_user_idx').on('scheduled_tasks').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('scheduled_tasks_agent_idx').on('scheduled_tasks').column('agent_id').execute();
  await ownedByUser(db, 'scheduled_tasks');

  // Keyed by the agent reference the user gave: an agent row id, or the user's runtime instance id.
  await db.schema.createTable('heartbeats')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_ref', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'uuid', (c) => c.references('agents.id').onDelete('cascade'))
    .addColumn('frequency', 'text', (c) => c.notNull().defaultTo('3h'))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('last_heartbeat', 'timestamptz')
    .addColumn('next_heartbeat', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('heartbeats_pkey', ['user_id', 'agent_ref'])
    .execute();
  await ownedByUser(db, 'heartbeats');
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['heartbeats', 'scheduled_tasks', 'workflow_nodes', 'workflows', 'devices', 'config_backups', 'agent_configs']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
