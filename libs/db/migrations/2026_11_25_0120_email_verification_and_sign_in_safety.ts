import { sql, type Kysely } from 'kysely';
import { ownedByUser } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too). Role names are the platform's fixed role names.
const APP = 'agentyard_app';
const SYSTEM = 'agentyard_system';
const OWNER = 'agentyard_owner';

export async function up(db: Kysely<any>): Promise<void> {
  // When the address was proven to belong to whoever holds the account (null: never).
  await sql`alter table users add column email_verified_at timestamptz`.execute(db);
  // Accounts an OAuth provider vouched for with this very address already proved it.
  await sql`
    update users u set email_verified_at = now()
    where exists (select 1 from provider_accounts p where p.user_id = u.id and p.provider in ('google', 'github') and lower(p.email) = lower(u.email))`.execute(db);

  // Verification links: the token is born in the mail worker and stored only as its hash.
  await db.schema.createTable('email_verifications')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('email_verifications_user_id_idx').on('email_verifications').column('user_id').execute();
  await ownedByUser(db, 'email_verifications');
  await sql`create policy email_verifications_owner_lookups on email_verifications to ${sql.id(OWNER)} using (true)`.execute(db);

  // An invite carried through an OAuth flow, to be used up by the account the callback creates.
  await sql`alter table oauth_states add column invite_token_hash text`.execute(db);

  // Claims a verification link (single use, unexpired), verifies the address it was sent to when it
  // is still the account's, and ends the user's other links: 'verified', 'spent' (used, superseded,
  // expired, or sent to an address the account no longer has) or 'unknown'.
  await sql`
    create function auth_claim_email_verification(p_token_hash text)
    returns text
    language plpgsql volatile security definer set search_path = public, pg_temp as $$
    declare
      v_user uuid;
      v_email text;
    begin
      update email_verifications set used_at = now()
        where token_hash = p_token_hash and used_at is null and expires_at > now()
        returning user_id, email into v_user, v_email;
      if v_user is not null then
        update users set email_verified_at = coalesce(email_verified_at, now()) where id = v_user and lower(email) = lower(v_email);
        if not found then
          return 'spent';
        end if;
        update email_verifications set used_at = now() where user_id = v_user and used_at is null;
        return 'verified';
      end if;
      if exists (select 1 from email_verifications where token_hash = p_token_hash) then
        return 'spent';
      end if;
      return 'unknown';
    end
    $$`.execute(db);
  await sql`revoke all on function auth_claim_email_verification(text) from public`.execute(db);
  await sql`grant execute on function auth_claim_email_verification(text) to ${sql.id(APP)}`.execute(db);

  // The lookups the edge and sign-in make now also say whether the address is verified.
  await sql`drop function auth_session_identity(text)`.execute(db);
  await sql`
    create function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text, email_verified boolean)
    language sql stable security definer set search_path = public, pg_temp as $$
      select s.id, u.id, u.email, u.email_verified_at is not null from sessions s join users u on u.id = s.user_id
      where s.token_hash = p_token_hash and s.expires_at > now()
    $$`.execute(db);
  await sql`drop function auth_api_key_identity(text)`.execute(db);
  await sql`
    create function auth_api_key_identity(p_key_hash text)
    returns table (key_id uuid, user_id uuid, email text, email_verified boolean)
    language sql stable security definer set search_path = public, pg_temp as $$
      select k.id, u.id, u.email, u.email_verified_at is not null from api_keys k join users u on u.id = k.user_id where k.key_hash = p_key_hash
    $$`.execute(db);
  await sql`drop function auth_external_candidate(text, text, text)`.execute(db);
  await sql`
    create function auth_external_candidate(p_provider text, p_subject text, p_email text)
    returns table (user_id uuid, name text, email text, external_signin_disabled boolean, linked boolean, email_verified boolean)
    language sql stable security definer set search_path = public, pg_temp as $$
      select user_id, name, email, external_signin_disabled, linked, email_verified from (
        select u.id as user_id, u.name, u.email, u.external_signin_disabled, true as linked, u.email_verified_at is not null as email_verified, 0 as rank
          from provider_accounts p join users u on u.id = p.user_id
          where p.provider = p_provider and p.provider_subject = p_subject
        union all
        select id, name, email, external_signin_disabled, false, email_verified_at is not null, 1 from users where p_email is not null and lower(email) = lower(p_email)
      ) candidates order by rank limit 1
    $$`.execute(db);
  await sql`grant execute on function auth_session_identity(text), auth_api_key_identity(text), auth_external_candidate(text, text, text) to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists auth_external_candidate(text, text, text)`.execute(db);
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
  await sql`drop function if exists auth_api_key_identity(text)`.execute(db);
  await sql`
    create function auth_api_key_identity(p_key_hash text)
    returns table (key_id uuid, user_id uuid, email text)
    language sql stable security definer set search_path = public, pg_temp as $$
      select k.id, u.id, u.email from api_keys k join users u on u.id = k.user_id where k.key_hash = p_key_hash
    $$`.execute(db);
  await sql`drop function if exists auth_session_identity(text)`.execute(db);
  await sql`
    create function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text)
    language sql stable security definer set search_path = public, pg_temp as $$
      select s.id, u.id, u.email from sessions s join users u on u.id = s.user_id
      where s.token_hash = p_token_hash and s.expires_at > now()
    $$`.execute(db);
  await sql`grant execute on function auth_session_identity(text), auth_api_key_identity(text), auth_external_candidate(text, text, text) to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
  await sql`drop function if exists auth_claim_email_verification(text)`.execute(db);
  await sql`alter table oauth_states drop column if exists invite_token_hash`.execute(db);
  await db.schema.dropTable('email_verifications').ifExists().execute();
  await sql`alter table users drop column if exists email_verified_at`.execute(db);
}
