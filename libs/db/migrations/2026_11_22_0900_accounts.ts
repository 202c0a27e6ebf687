import { sql, type Kysely } from 'kysely';
import { USER_ID } from '../migration-helpers/row-level-security.ts';

// Frozen in time: no imports of application code (the migration helpers are frozen too). Role names are the platform's fixed role names.
const APP = 'agentyard_app';
const SYSTEM = 'agentyard_system';
const OWNER = 'agentyard_owner';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`grant usage on schema public to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
  await sql`alter default privileges in schema public grant select, insert, update, delete on tables to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
  await sql`alter default privileges in schema public grant usage, select on sequences to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
  await sql`alter default privileges in schema public revoke execute on functions from public`.execute(db);

  await db.schema.createTable('users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('referral_code', 'text')
    .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
    .addColumn('runtime_url', 'text')
    .addColumn('runtime_instance_id', 'text')
    .addColumn('external_signin_disabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index users_email_key on users (lower(email))`.execute(db);
  await sql`alter table users enable row level security`.execute(db);
  await sql`alter table users force row level security`.execute(db);
  await sql`create policy users_self on users using (id = ${USER_ID}) with check (id = ${USER_ID})`.execute(db);

  await db.schema.createTable('sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('sessions_user_id_idx').on('sessions').column('user_id').execute();
  await sql`alter table sessions enable row level security`.execute(db);
  await sql`alter table sessions force row level security`.execute(db);
  await sql`create policy sessions_owner on sessions using (user_id = ${USER_ID}) with check (user_id = ${USER_ID})`.execute(db);

  // The owner sees every row so that the security-definer lookups below (which run as the owner)
  // work under FORCE ROW LEVEL SECURITY; the runtime role never is, nor becomes, the owner.
  await sql`create policy users_owner_lookups on users to ${sql.id(OWNER)} using (true)`.execute(db);
  await sql`create policy sessions_owner_lookups on sessions to ${sql.id(OWNER)} using (true)`.execute(db);

  // Pre-authentication lookups, the only reads across users the runtime role may make: each
  // returns just what sign-in needs for one exact key, never a listing.
  await sql`
    create function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text)
    language sql stable security definer set search_path = public, pg_temp as $$
      select s.id, u.id, u.email from sessions s join users u on u.id = s.user_id
      where s.token_hash = p_token_hash and s.expires_at > now()
    $$`.execute(db);
  await sql`
    create function auth_login_candidate(p_email text)
    returns table (user_id uuid, name text, password_hash text)
    language sql stable security definer set search_path = public, pg_temp as $$
      select id, name, password_hash from users where lower(email) = lower(p_email)
    $$`.execute(db);
  await sql`grant execute on function auth_session_identity(text), auth_login_candidate(text) to ${sql.id(APP)}, ${sql.id(SYSTEM)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists auth_login_candidate(text)`.execute(db);
  await sql`drop function if exists auth_session_identity(text)`.execute(db);
  await db.schema.dropTable('sessions').ifExists().execute();
  await db.schema.dropTable('users').ifExists().execute();
}
