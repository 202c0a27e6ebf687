import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Issue 32. Swarms: a named group of a user's agents (members go with their agent), and runs that
// sent one message to every member, each member's answer on a row of its own (the agent id is kept
// without a reference: a run stays readable after a member is deleted). Installations: an OpenClaw
// the user runs themselves, linked by their key, its gateway token sealed. Lineage: which agent and
// snapshot a clone came from (plain ids: the source may be deleted later, the lineage stays).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('swarms')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull().check(sql`char_length(name) between 1 and 64`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('swarms_user_idx').on('swarms').columns(['user_id', 'created_at']).execute();
  await ownedByUser(db, 'swarms');

  await db.schema.createTable('swarm_members')
    .addColumn('swarm_id', 'uuid', (c) => c.notNull().references('swarms.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('swarm_members_pkey', ['swarm_id', 'agent_id'])
    .execute();
  await db.schema.createIndex('swarm_members_agent_idx').on('swarm_members').column('agent_id').execute();
  await ownedByUser(db, 'swarm_members');

  await db.schema.createTable('swarm_runs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('swarm_id', 'uuid', (c) => c.notNull().references('swarms.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('broadcast', 'first', 'all')`))
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'running', 'completed', 'failed')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('swarm_runs_user_created_idx').on('swarm_runs').columns(['user_id', 'created_at']).execute();
  await ownedByUser(db, 'swarm_runs');

  await db.schema.createTable('swarm_run_members')
    .addColumn('run_id', 'uuid', (c) => c.notNull().references('swarm_runs.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'running', 'delivered', 'answered', 'failed', 'skipped')`))
    .addColumn('answer', 'text')
    .addColumn('error', 'text')
    .addColumn('tokens', 'integer')
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addPrimaryKeyConstraint('swarm_run_members_pkey', ['run_id', 'agent_id'])
    .execute();
  await ownedByUser(db, 'swarm_run_members');

  await db.schema.createTable('installations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('home', 'link')`))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('local', 'remote')`))
    .addColumn('name', 'text', (c) => c.check(sql`char_length(name) <= 64`))
    .addColumn('gateway_url', 'text')
    .addColumn('gateway_token_sealed', 'text')
    .addColumn('version', 'text')
    .addColumn('last_seen_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('installations_user_idx').on('installations').columns(['user_id', 'created_at']).execute();
  await ownedByUser(db, 'installations');

  await db.schema.alterTable('agents').addColumn('cloned_from_agent_id', 'uuid').addColumn('cloned_from_snapshot_id', 'uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('cloned_from_agent_id').dropColumn('cloned_from_snapshot_id').execute();
  for (const table of ['installations', 'swarm_run_members', 'swarm_runs', 'swarm_members', 'swarms']) await db.schema.dropTable(table).ifExists().execute();
}
