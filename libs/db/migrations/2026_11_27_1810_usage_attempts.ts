import type { Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// How an AI call was served (issue 33): each provider attempt, retries after a 429 or 5xx and the
// fallback included, as `{attempts: [{model, provider, status, outcome, ms}]}`. Rows written before
// this have none.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('usage_events').addColumn('detail', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('usage_events').dropColumn('detail').execute();
}
