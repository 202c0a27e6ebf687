import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Prompt-cache tokens a call reported, each a part of its input_tokens (read: served from the
  // provider's cache at its lower rate; write: stored in it at its higher rate). Added columns keep
  // the tables' row-level security as it is.
  for (const table of ['usage_events', 'usage_daily']) {
    await db.schema
      .alterTable(table)
      .addColumn('cache_read_tokens', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`cache_read_tokens >= 0`))
      .addColumn('cache_write_tokens', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`cache_write_tokens >= 0`))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['usage_events', 'usage_daily']) await db.schema.alterTable(table).dropColumn('cache_read_tokens').dropColumn('cache_write_tokens').execute();
}
