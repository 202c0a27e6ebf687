import type { Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// A restore under way (issue 30): the snapshot it brings the agent back to and the before-restore
// snapshot of what it replaces, set before the agent's state is touched and cleared once the agent
// is up again on its new state, so the reconciler finishes a restore whose process died (plain ids:
// either snapshot may be deleted meanwhile).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('restoring_snapshot_id', 'uuid').addColumn('restoring_before_snapshot_id', 'uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('restoring_snapshot_id').dropColumn('restoring_before_snapshot_id').execute();
}
