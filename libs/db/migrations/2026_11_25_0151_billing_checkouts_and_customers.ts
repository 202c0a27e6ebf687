import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too).
export async function up(db: Kysely<any>): Promise<void> {
  // What the billing page shows of a subscription: whether it ends with its current period.
  await db.schema.alterTable('subscriptions').addColumn('cancel_at_period_end', 'boolean', (c) => c.notNull().defaultTo(false)).execute();

  // The payment provider's customer of each user (Stripe `cus_…`, or the local provider's), so
  // every checkout and the portal of one user name the same customer.
  await db.schema.createTable('billing_customers')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('stripe', 'local')`))
    .addColumn('customer_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await ownedByUser(db, 'billing_customers');

  // Development checkouts (BILLING_PROVIDER=local): one row per started checkout, its id kept only
  // as a hash; completed once, by its own user, before it expires.
  await db.schema.createTable('local_checkouts')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('subscription', 'credits')`))
    .addColumn('plan', 'text')
    .addColumn('amount_usd', sql`numeric(18, 2)`)
    .addColumn('session_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('completed_at', 'timestamptz')
    .addCheckConstraint('local_checkouts_what', sql`(kind = 'subscription' and plan is not null and amount_usd is null) or (kind = 'credits' and plan is null and amount_usd > 0)`)
    .execute();
  await db.schema.createIndex('local_checkouts_user_idx').on('local_checkouts').column('user_id').execute();
  await ownedByUser(db, 'local_checkouts');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('local_checkouts').ifExists().execute();
  await db.schema.dropTable('billing_customers').ifExists().execute();
  await db.schema.alterTable('subscriptions').dropColumn('cancel_at_period_end').execute();
}
