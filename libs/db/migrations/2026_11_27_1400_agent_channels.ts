import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code.
//
// The per-agent channel vault (issue 29): one row per messaging channel an agent is bound to. The
// credentials are sealed with the platform keyring (bound to the agent, the channel and the field),
// never readable through the API; the hint is at most their last four characters. The settings
// are the channel's own, non-secret ones (dmPolicy, allowFrom, ...). The row goes with its agent.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('agent_channels')
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel ~ '^[a-z][a-z0-9-]{0,31}$'`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('credentials_sealed', 'text', (c) => c.notNull())
    .addColumn('credential_hint', 'text', (c) => c.notNull().check(sql`char_length(credential_hint) <= 4`))
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('agent_channels_pkey', ['agent_id', 'channel'])
    .execute();
  await db.schema.createIndex('agent_channels_user_idx').on('agent_channels').column('user_id').execute();
  await ownedByUser(db, 'agent_channels');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('agent_channels').ifExists().execute();
}
