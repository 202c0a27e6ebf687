import type { Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// A clone being seeded (issue 30): the snapshot whose state the new agent is given, set in the
// transaction that creates its row and cleared once its provisioning is queued, so the reconciler
// finishes (or removes) a clone whose process died midway (a plain id: the snapshot may be deleted meanwhile).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('seeding_snapshot_id', 'uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('seeding_snapshot_id').execute();
}
