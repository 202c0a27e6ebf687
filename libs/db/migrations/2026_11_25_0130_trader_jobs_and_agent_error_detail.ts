import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// Trading-service jobs started through the relay, each bound to the user who started it: a job
// made with the platform key is polled only by that user (anyone else gets 404), with the same key.
// And an agent's failure in two parts: `last_error` a fixed message the web shows, and
// `last_error_detail` the engine's own words (paths, container engine messages) for the backend and admins.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('last_error_detail', 'text').execute();

  await db.schema.createTable('trader_jobs')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('job_id', 'text', (c) => c.notNull().check(sql`job_id ~ '^[A-Za-z0-9_-]{1,128}$'`))
    .addColumn('platform_key', 'boolean', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('trader_jobs_pkey', ['user_id', 'job_id'])
    .execute();
  await db.schema.createIndex('trader_jobs_user_created_idx').on('trader_jobs').columns(['user_id', 'created_at']).execute();
  await ownedByUser(db, 'trader_jobs');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('trader_jobs').ifExists().execute();
  await db.schema.alterTable('agents').dropColumn('last_error_detail').execute();
}
