import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code. Role names are the platform's fixed role names.
const APP = 'agentyard_app';

// What a user pays for and spends is written only by the system role (the Stripe webhook, the
// usage writer, the development checkout's completion through the system connection): the
// runtime role, which every web request uses, may read its own rows of these tables and never
// write one, so no bug in a web route can grant a plan, credits or a customer, or erase usage.
const SYSTEM_WRITTEN = ['subscriptions', 'credit_entries', 'billing_customers', 'usage_events', 'usage_daily', 'usage_tools_daily'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of SYSTEM_WRITTEN) await sql`revoke insert, update, delete, truncate on ${sql.id(table)} from ${sql.id(APP)}`.execute(db);
  // Which Stripe events were applied is the webhook's alone (no owner, no row-level security).
  await sql`revoke all on stripe_events from ${sql.id(APP)}`.execute(db);
  // A user starts their own development checkout; only the system completes it.
  await sql`revoke update, delete, truncate on local_checkouts from ${sql.id(APP)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of SYSTEM_WRITTEN.filter((t) => t !== 'credit_entries')) await sql`grant insert, update, delete on ${sql.id(table)} to ${sql.id(APP)}`.execute(db);
  await sql`grant insert on credit_entries to ${sql.id(APP)}`.execute(db);
  await sql`grant select, insert, update, delete on stripe_events to ${sql.id(APP)}`.execute(db);
  await sql`grant update, delete on local_checkouts to ${sql.id(APP)}`.execute(db);
}
