import type { Kysely } from 'kysely';

// Frozen in time: no imports of application code.

export async function up(db: Kysely<any>): Promise<void> {
  // An agent its owner's plan no longer covers runs on until this time (the grace period), then
  // stops; null while the plan covers it. The table's row-level security covers the added column.
  await db.schema.alterTable('agents').addColumn('stops_beyond_plan_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('stops_beyond_plan_at').execute();
}
