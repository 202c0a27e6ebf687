import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// A call none of whose provider attempts served it (every retry and the fallback failed, issue 33)
// is a usage row too, `outcome = 'failed'`, with no tokens and no cost: nothing billed, but counted
// and its attempts kept. The daily aggregate counts them among its calls and apart in
// failed_calls. Added columns keep the tables' row-level security as it is.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('usage_events')
    .addColumn('outcome', 'text', (c) => c.notNull().defaultTo('served').check(sql`outcome in ('served', 'failed')`))
    .execute();
  await db.schema
    .alterTable('usage_events')
    .addCheckConstraint('usage_events_failed_bills_nothing', sql`outcome = 'served' or (total_tokens = 0 and cost_usd is not null and cost_usd = 0)`)
    .execute();
  await db.schema
    .alterTable('usage_daily')
    .addColumn('failed_calls', 'integer', (c) => c.notNull().defaultTo(0).check(sql`failed_calls >= 0`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('usage_daily').dropColumn('failed_calls').execute();
  await db.schema.alterTable('usage_events').dropConstraint('usage_events_failed_bills_nothing').execute();
  await db.schema.alterTable('usage_events').dropColumn('outcome').execute();
}
