import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too).

export async function up(db: Kysely<any>): Promise<void> {
  // The name of each tool the model called in the call's answer, in order (a tool called twice is named twice).
  await db.schema.alterTable('usage_events').addColumn('tool_names', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`)).execute();

  // Tool calls summed per (day, user, agent, tool), fed in the same transaction as usage_daily and
  // only by newly inserted usage_events rows; agent_id is '' for calls made without an agent.
  await db.schema.createTable('usage_tools_daily')
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('user_ref', 'text', (c) => c.notNull())
    .addColumn('user_id', 'uuid')
    .addColumn('agent_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('calls', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`calls >= 0`))
    .addColumn('answers', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`answers >= 0`))
    .addPrimaryKeyConstraint('usage_tools_daily_pkey', ['day', 'user_ref', 'agent_id', 'tool'])
    .execute();
  await db.schema.createIndex('usage_tools_daily_user_day_idx').on('usage_tools_daily').columns(['user_id', 'day']).execute();
  await db.schema.createIndex('usage_tools_daily_agent_day_idx').on('usage_tools_daily').columns(['agent_id', 'day']).execute();
  await ownedByUser(db, 'usage_tools_daily');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('usage_tools_daily').ifExists().execute();
  await db.schema.alterTable('usage_events').dropColumn('tool_names').execute();
}
