import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
//
// Lists that grow are read in keyset pages: "the next `limit` rows after (timestamp, id)" in the
// list's order. Each index below serves one list's order directly (filter columns first, then the
// order's columns), so a page costs `limit` index entries wherever it starts; the one-column or
// two-column indexes they supersede go.
const PAGE_INDEXES = [
  { name: 'workflows_user_page_idx', table: 'workflows', columns: 'user_id, updated_at desc, id desc', replaces: { name: 'workflows_user_idx', columns: 'user_id, updated_at' } },
  { name: 'scheduled_tasks_user_page_idx', table: 'scheduled_tasks', columns: 'user_id, created_at desc, id desc', replaces: { name: 'scheduled_tasks_user_idx', columns: 'user_id, created_at' } },
  { name: 'scheduled_tasks_agent_page_idx', table: 'scheduled_tasks', columns: 'agent_id, created_at desc, id desc', replaces: { name: 'scheduled_tasks_agent_idx', columns: 'agent_id' } },
  { name: 'api_keys_user_page_idx', table: 'api_keys', columns: 'user_id, created_at desc, id desc', replaces: { name: 'api_keys_user_id_idx', columns: 'user_id' } },
  { name: 'underground_events_user_page_idx', table: 'underground_events', columns: 'user_id, event_date desc, id desc', replaces: { name: 'underground_events_user_date_idx', columns: 'user_id, event_date' } },
  { name: 'webhook_events_source_page_idx', table: 'webhook_events', columns: 'source, received_at desc, event_id desc', replaces: { name: 'webhook_events_source_received_idx', columns: 'source, received_at' } },
  // The admin listing reads every creator's invites; the per-creator index stays for the cap's count.
  { name: 'invites_page_idx', table: 'invites', columns: 'created_at desc, id desc', replaces: null },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of PAGE_INDEXES) {
    await sql`create index ${sql.id(index.name)} on ${sql.id(index.table)} (${sql.raw(index.columns)})`.execute(db);
    if (index.replaces) await sql`drop index ${sql.id(index.replaces.name)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of PAGE_INDEXES) {
    if (index.replaces) await sql`create index ${sql.id(index.replaces.name)} on ${sql.id(index.table)} (${sql.raw(index.replaces.columns)})`.execute(db);
    await sql`drop index ${sql.id(index.name)}`.execute(db);
  }
}
