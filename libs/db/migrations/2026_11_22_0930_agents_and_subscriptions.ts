import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('agents')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending')
      .check(sql`status in ('pending', 'provisioning', 'deploying', 'running', 'active', 'stopped', 'suspended', 'error')`))
    .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
    .addColumn('tier', 'text')
    .addColumn('ai_provider', 'text', (c) => c.notNull().defaultTo('openrouter'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('tools_profile', 'text', (c) => c.notNull().check(sql`tools_profile in ('coding', 'messaging')`))
    .addColumn('subdomain', 'text', (c) => c.notNull().unique())
    .addColumn('runtime_version', 'text')
    .addColumn('image', 'text')
    .addColumn('container_id', 'text')
    .addColumn('host_port', 'integer', (c) => c.unique())
    .addColumn('gateway_url', 'text')
    .addColumn('gateway_token_sealed', 'text')
    .addColumn('hooks_token_sealed', 'text')
    .addColumn('ai_key_hash', 'text', (c) => c.unique())
    .addColumn('config', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('verification_type', 'text', (c) => c.check(sql`verification_type in ('eas', 'coinbase', 'ens', 'webauthn')`))
    .addColumn('attestation_uid', 'text')
    .addColumn('verifier_address', 'text')
    .addColumn('verification_metadata', 'jsonb')
    .addColumn('verified_at', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('started_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('agents_user_id_idx').on('agents').columns(['user_id', 'created_at']).execute();
  await ownedByUser(db, 'agents');

  // Payment-provider subscriptions, kept in sync from signed webhooks; a row may arrive before
  // its user is known (user_id null), which only the system connection sees.
  await db.schema.createTable('subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('customer_id', 'text')
    .addColumn('customer_email', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('plan', 'text')
    .addColumn('current_period_end', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('subscriptions_user_id_idx').on('subscriptions').column('user_id').execute();
  await ownedByUser(db, 'subscriptions');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('subscriptions').ifExists().execute();
  await db.schema.dropTable('agents').ifExists().execute();
}
