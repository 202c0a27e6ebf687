import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too).

export async function up(db: Kysely<any>): Promise<void> {
  // Operator bridge: platform-level messages between operator agents (no user owns them).
  await db.schema.createTable('bridge_messages')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('general', 'tasks', 'alerts')`))
    .addColumn('priority', 'text', (c) => c.notNull().check(sql`priority in ('normal', 'urgent', 'fyi')`))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('bridge_messages_channel_created_idx').on('bridge_messages').columns(['channel', 'created_at', 'id']).execute();
  await db.schema.createIndex('bridge_messages_created_idx').on('bridge_messages').columns(['created_at']).execute();
  // One row per (reader, message): the primary key is what makes concurrent inbox reads mark each message once.
  await db.schema.createTable('bridge_reads')
    .addColumn('reader', 'text', (c) => c.notNull())
    .addColumn('message_id', 'bigint', (c) => c.notNull().references('bridge_messages.id').onDelete('cascade'))
    .addColumn('read_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('bridge_reads_pkey', ['reader', 'message_id'])
    .execute();
  await db.schema.createIndex('bridge_reads_message_idx').on('bridge_reads').column('message_id').execute();

  await db.schema.createTable('underground_wallets')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('private_key_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('underground_wallets_agent_idx').on('underground_wallets').column('agent_id').execute();
  await db.schema.createIndex('underground_wallets_user_idx').on('underground_wallets').column('user_id').execute();
  await ownedByUser(db, 'underground_wallets');

  await db.schema.createTable('underground_events')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('venue', 'text', (c) => c.notNull())
    .addColumn('event_date', 'timestamptz', (c) => c.notNull())
    .addColumn('ticket_price_usdc', 'numeric', (c) => c.notNull().check(sql`ticket_price_usdc >= 0`))
    .addColumn('total_tickets', 'integer', (c) => c.notNull().check(sql`total_tickets > 0`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('underground_events_user_date_idx').on('underground_events').columns(['user_id', 'event_date']).execute();
  await ownedByUser(db, 'underground_events');

  await db.schema.createTable('underground_splits')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('total_amount_usdc', 'numeric', (c) => c.notNull().check(sql`total_amount_usdc > 0`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('completed')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('underground_splits_user_idx').on('underground_splits').column('user_id').execute();
  await ownedByUser(db, 'underground_splits');

  await db.schema.createTable('underground_split_recipients')
    .addColumn('split_id', 'uuid', (c) => c.notNull().references('underground_splits.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('share_percent', 'numeric', (c) => c.notNull())
    .addColumn('amount_usdc', 'numeric', (c) => c.notNull())
    .addPrimaryKeyConstraint('underground_split_recipients_pkey', ['split_id', 'position'])
    .execute();
  await db.schema.createIndex('underground_split_recipients_user_idx').on('underground_split_recipients').column('user_id').execute();
  await ownedByUser(db, 'underground_split_recipients');

  // An agent's place on the bus: the wallet whose signatures speak for it and the webhook it hears on.
  await db.schema.createTable('bus_endpoints')
    .addColumn('agent_id', 'uuid', (c) => c.primaryKey().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('signer_address', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('bus_endpoints_user_idx').on('bus_endpoints').column('user_id').execute();
  await ownedByUser(db, 'bus_endpoints');

  // Every accepted bus message, keyed by its id: the key is the replay guard. Owned by the sender's user.
  await db.schema.createTable('bus_messages')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('from_agent_id', 'uuid', (c) => c.notNull())
    .addColumn('to_agent_id', 'uuid', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('signed_at', 'timestamptz', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('routing', 'jsonb')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('delivery_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('bus_messages_user_idx').on('bus_messages').column('user_id').execute();
  await ownedByUser(db, 'bus_messages');

  // Inbound provider webhooks (live stream, hosting-platform status): platform-level, idempotent by event id.
  await db.schema.createTable('webhook_events')
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('livestream', 'hosting-status')`))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhook_events_pkey', ['source', 'event_id'])
    .execute();
  await db.schema.createIndex('webhook_events_source_received_idx').on('webhook_events').columns(['source', 'received_at']).execute();

  await db.schema.createTable('user_trader_keys')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('api_key_sealed', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await ownedByUser(db, 'user_trader_keys');
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['user_trader_keys', 'webhook_events', 'bus_messages', 'bus_endpoints', 'underground_split_recipients', 'underground_splits', 'underground_events', 'underground_wallets', 'bridge_reads', 'bridge_messages']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
