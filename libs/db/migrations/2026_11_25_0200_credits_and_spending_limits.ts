import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too). Role names are the platform's fixed role names.
const APP = 'agentyard_app';
const SYSTEM = 'agentyard_system';

export async function up(db: Kysely<any>): Promise<void> {
  // The credits ledger: append-only, the balance is the sum. `source` names what caused an entry
  // (a payment, a refund, a batch of usage) so applying the same cause twice adds nothing.
  // Usage entries name the month whose AI spend beyond the plan's allowance they settle.
  await db.schema.createTable('credit_entries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('purchase', 'usage', 'refund', 'grant')`))
    .addColumn('amount_usd', sql`numeric(18, 8)`, (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('source', 'text', (c) => c.notNull().unique())
    .addColumn('usage_month', 'date')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('credit_entries_usage_month', sql`(kind = 'usage') = (usage_month is not null)`)
    .execute();
  await db.schema.createIndex('credit_entries_user_created_idx').on('credit_entries').columns(['user_id', 'created_at', 'id']).execute();
  await ownedByUser(db, 'credit_entries');
  // Append-only for every role the services use: a correction is a new entry, never an edit.
  await sql`revoke update, delete, truncate on credit_entries from ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);

  // A user's own lower monthly limit on AI spend (null: none beyond allowance and credits).
  await db.schema.createTable('spending_limits')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('monthly_usd', sql`numeric(18, 8)`, (c) => c.check(sql`monthly_usd >= 0`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await ownedByUser(db, 'spending_limits');

  // Per-agent monthly limits, only on the user's own agents (the domain checks the agent under RLS).
  await db.schema.createTable('agent_spending_limits')
    .addColumn('agent_id', 'uuid', (c) => c.primaryKey().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('monthly_usd', sql`numeric(18, 8)`, (c) => c.notNull().check(sql`monthly_usd >= 0`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('agent_spending_limits_user_idx').on('agent_spending_limits').column('user_id').execute();
  await ownedByUser(db, 'agent_spending_limits');

  // Credits that arrive (not the ledger's own usage entries) reach the AI gateway's spend counters
  // as a notice `credit_entries:<user id>` on the cache channel when the transaction commits.
  await sql`
    create function notify_credit_entry() returns trigger
    language plpgsql as $$
    begin
      perform pg_notify('agentyard_cache', 'credit_entries:' || new.user_id::text);
      return null;
    end
    $$`.execute(db);
  await sql`create trigger credit_entries_cache_notice after insert on credit_entries
    for each row when (new.kind <> 'usage') execute function notify_credit_entry()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists credit_entries_cache_notice on credit_entries`.execute(db);
  await sql`drop function if exists notify_credit_entry()`.execute(db);
  await db.schema.dropTable('agent_spending_limits').ifExists().execute();
  await db.schema.dropTable('spending_limits').ifExists().execute();
  await db.schema.dropTable('credit_entries').ifExists().execute();
}
