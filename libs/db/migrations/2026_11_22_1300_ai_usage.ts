import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too).

export async function up(db: Kysely<any>): Promise<void> {
  // One row per AI call. user_id is set when the caller is a known user; demo and anonymous backend
  // calls have none (user_ref says who) and only the system connection sees them.
  await db.schema.createTable('usage_events')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid')
    .addColumn('user_ref', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'integer', (c) => c.notNull().check(sql`input_tokens >= 0`))
    .addColumn('output_tokens', 'integer', (c) => c.notNull().check(sql`output_tokens >= 0`))
    .addColumn('total_tokens', 'integer', (c) => c.notNull().check(sql`total_tokens >= 0`))
    .addColumn('cost_usd', sql`numeric(18, 8)`)
    .addColumn('turn_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('usage_events_user_day_idx').on('usage_events').columns(['user_id', 'day']).execute();
  await db.schema.createIndex('usage_events_agent_day_idx').on('usage_events').columns(['agent_id', 'day']).execute();
  await ownedByUser(db, 'usage_events');

  await db.schema.createTable('usage_daily')
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('user_ref', 'text', (c) => c.notNull())
    .addColumn('user_id', 'uuid')
    .addColumn('agent_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('calls', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unpriced_calls', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('total_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_usd', sql`numeric(18, 8)`, (c) => c.notNull().defaultTo(0))
    .addColumn('turns', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_daily_pkey', ['day', 'user_ref', 'agent_id', 'model'])
    .execute();
  await db.schema.createIndex('usage_daily_user_day_idx').on('usage_daily').columns(['user_id', 'day']).execute();
  await db.schema.createIndex('usage_daily_agent_day_idx').on('usage_daily').columns(['agent_id', 'day']).execute();
  await ownedByUser(db, 'usage_daily');

  // Stripe events already applied: the webhook is idempotent by event id, and an event older
  // than one already applied to the same object does not overwrite it.
  await db.schema.createTable('stripe_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text')
    .addColumn('created', 'timestamptz', (c) => c.notNull())
    .addColumn('processed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('stripe_events_object_idx').on('stripe_events').columns(['object_id', 'created']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stripe_events').ifExists().execute();
  await db.schema.dropTable('usage_daily').ifExists().execute();
  await db.schema.dropTable('usage_events').ifExists().execute();
}
