import type { Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// When an agent's provisioning began, where that is not its creation (issue 30): a clone the
// reconciler seeds again long after its process died is provisioned from then, so the provisioning
// deadline counts from it, not from the row's creation (null: from created_at).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('provisioning_since', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('provisioning_since').execute();
}
