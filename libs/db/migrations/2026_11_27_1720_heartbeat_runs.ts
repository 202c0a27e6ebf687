import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Every heartbeat firing is a row, as every scheduled prompt's is: delivered, failed, or skipped
// (credits spent, the owner's spend limit reached, or the agent's conversations idle too long, when
// the heartbeat pauses itself). (user_id, agent_ref, due_at) is unique, so a retried firing updates
// its row. The heartbeat keeps its last status and why it paused.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('heartbeat_runs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_ref', 'text', (c) => c.notNull())
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('delivered', 'failed', 'skipped-no-credits', 'skipped-spend-limit', 'skipped-idle')`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addUniqueConstraint('heartbeat_runs_beat_due_key', ['user_id', 'agent_ref', 'due_at'])
    .execute();
  // Pages of one heartbeat's runs, newest first; the purge finds old rows by due time.
  await sql`create index heartbeat_runs_page_idx on heartbeat_runs (user_id, agent_ref, due_at desc, id desc)`.execute(db);
  await sql`create index heartbeat_runs_due_idx on heartbeat_runs (due_at)`.execute(db);
  await ownedByUser(db, 'heartbeat_runs');
  await db.schema.alterTable('heartbeats').addColumn('last_status', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('heartbeats').dropColumn('last_status').execute();
  await db.schema.dropTable('heartbeat_runs').ifExists().execute();
}
