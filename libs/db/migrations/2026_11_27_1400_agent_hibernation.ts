import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.

export async function up(db: Kysely<any>): Promise<void> {
  // An idle agent hibernates: status `suspended` with how deep (paused: memory kept; stopped: only
  // its state disk) and since when. Added columns keep the table's row-level security as it is.
  await db.schema
    .alterTable('agents')
    .addColumn('hibernation', 'text', (c) => c.check(sql`hibernation in ('paused', 'stopped')`))
    .addColumn('suspended_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('hibernation').dropColumn('suspended_at').execute();
}
