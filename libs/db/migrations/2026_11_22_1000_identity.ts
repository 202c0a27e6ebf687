import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too). Role names are the platform's fixed role names.
const APP = 'agentyard_app';
const SYSTEM = 'agentyard_system';
const OWNER = 'agentyard_owner';

/** ownedByUser, and the security-definer lookups below run as the owner, which FORCE would otherwise filter too. */
async function ownedByUserWithOwnerLookups(db: Kysely<any>, table: string): Promise<void> {
  await ownedByUser(db, table);
  await sql`create policy ${sql.id(`${table}_owner_lookups`)} on ${sql.table(table)} to ${sql.id(OWNER)} using (true)`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  // External sign-in links: OAuth providers (tokens sealed), wallets and farcaster ids.
  await db.schema.createTable('provider_accounts')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_subject', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('access_token_sealed', 'text')
    .addColumn('refresh_token_sealed', 'text')
    .addColumn('token_metadata_sealed', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index provider_accounts_subject_key on provider_accounts (provider, provider_subject)`.execute(db);
  await sql`create unique index provider_accounts_user_provider_key on provider_accounts (user_id, provider)`.execute(db);
  await ownedByUserWithOwnerLookups(db, 'provider_accounts');

  await db.schema.createTable('api_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('api_keys_user_id_idx').on('api_keys').column('user_id').execute();
  await ownedByUserWithOwnerLookups(db, 'api_keys');

  // Invites belong to whoever created them; the token is stored hashed (lookup) and sealed (admin listing).
  await db.schema.createTable('invites')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('email', 'text')
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('used_by', 'uuid')
    .execute();
  await db.schema.createIndex('invites_user_id_idx').on('invites').column('user_id').execute();
  await ownedByUserWithOwnerLookups(db, 'invites');

  await db.schema.createTable('password_resets')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('request_id', 'uuid', (c) => c.notNull().unique())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('password_resets_user_id_idx').on('password_resets').column('user_id').execute();
  await ownedByUserWithOwnerLookups(db, 'password_resets');

  // No owner: a request by email address, before anyone is known; the mail worker deletes it once handled.
  await db.schema.createTable('password_reset_requests')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema.createTable('risc_events')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('match_by', 'text', (c) => c.notNull())
    .addColumn('events', 'jsonb', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('processed_at', 'timestamptz')
    .addColumn('outcome', 'jsonb')
    .execute();

  await db.schema.createTable('auth_nonces')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();

  // OAuth state and PKCE verifier between the redirect and the callback (verifier sealed).
  await db.schema.createTable('oauth_states')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('code_verifier_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema.createTable('email_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('addresses', sql`text[]`, (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema.createTable('email_suppressions')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // The runtime role reads nonces and OAuth states (single-use, by exact key) but no cross-user table.
  await sql`revoke all on risc_events, email_events, email_suppressions, password_reset_requests from ${sql.id(APP)}`.execute(db);
  await sql`grant insert on password_reset_requests to ${sql.id(APP)}`.execute(db);

  // Pre-authentication lookups for one exact key each.
  await sql`
    create function auth_api_key_identity(p_key_hash text)
    returns table (key_id uuid, user_id uuid, email text)
    language sql stable security definer set search_path = public, pg_temp as $$
      select k.id, u.id, u.email from api_keys k join users u on u.id = k.user_id where k.key_hash = p_key_hash
    $$`.execute(db);
  await sql`
    create function auth_invite_status(p_token_hash text)
    returns table (invite_id uuid, expires_at timestamptz, used_at timestamptz)
    language sql stable security definer set search_path = public, pg_temp as $$
      select id, expires_at, used_at from invites where token_hash = p_token_hash
    $$`.execute(db);
  // Claims a reset token (single use, unexpired) and names its user, in the caller's transaction.
  await sql`
    create function auth_claim_password_reset(p_token_hash text)
    returns uuid
    language sql volatile security definer set search_path = public, pg_temp as $$
      update password_resets set used_at = now()
      where token_hash = p_token_hash and used_at is null and expires_at > now()
      returning user_id
    $$`.execute(db);
  // Sign-in by an external identity: the linked user, else the user with that email.
  await sql`
    create function auth_external_candidate(p_provider text, p_subject text, p_email text)
    returns table (user_id uuid, name text, email text, external_signin_disabled boolean, linked boolean)
    language sql stable security definer set search_path = public, pg_temp as $$
      select user_id, name, email, external_signin_disabled, linked from (
        select u.id as user_id, u.name, u.email, u.external_signin_disabled, true as linked, 0 as rank
          from provider_accounts p join users u on u.id = p.user_id
          where p.provider = p_provider and p.provider_subject = p_subject
        union all
        select id, name, email, external_signin_disabled, false, 1 from users where p_email is not null and lower(email) = lower(p_email)
      ) candidates order by rank limit 1
    $$`.execute(db);
  await sql`grant execute on function auth_api_key_identity(text), auth_invite_status(text), auth_claim_password_reset(text), auth_external_candidate(text, text, text) to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists auth_external_candidate(text, text, text)`.execute(db);
  await sql`drop function if exists auth_claim_password_reset(text)`.execute(db);
  await sql`drop function if exists auth_invite_status(text)`.execute(db);
  await sql`drop function if exists auth_api_key_identity(text)`.execute(db);
  for (const table of ['email_suppressions', 'email_events', 'oauth_states', 'auth_nonces', 'risc_events', 'password_reset_requests', 'password_resets', 'invites', 'api_keys', 'provider_accounts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
