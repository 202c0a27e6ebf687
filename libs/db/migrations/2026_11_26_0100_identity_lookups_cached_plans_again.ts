import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// 2026_11_25_0120 added `email_verified` to the edge's two per-request identity lookups and wrote
// them back as `language sql`, undoing 2026_11_22_1600: a SQL function with a SET clause is not
// inlined, so PostgreSQL parsed and planned its body on every call. As plpgsql the plan is cached
// per connection again. Same columns and results; create or replace keeps the owner and grants.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text, email_verified boolean)
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return query select s.id, u.id, u.email, u.email_verified_at is not null from sessions s join users u on u.id = s.user_id
        where s.token_hash = p_token_hash and s.expires_at > now();
    end
    $$`.execute(db);
  await sql`
    create or replace function auth_api_key_identity(p_key_hash text)
    returns table (key_id uuid, user_id uuid, email text, email_verified boolean)
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return query select k.id, u.id, u.email, u.email_verified_at is not null from api_keys k join users u on u.id = k.user_id where k.key_hash = p_key_hash;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text, email_verified boolean)
    language sql stable security definer set search_path = public, pg_temp as $$
      select s.id, u.id, u.email, u.email_verified_at is not null from sessions s join users u on u.id = s.user_id
      where s.token_hash = p_token_hash and s.expires_at > now()
    $$`.execute(db);
  await sql`
    create or replace function auth_api_key_identity(p_key_hash text)
    returns table (key_id uuid, user_id uuid, email text, email_verified boolean)
    language sql stable security definer set search_path = public, pg_temp as $$
      select k.id, u.id, u.email, u.email_verified_at is not null from api_keys k join users u on u.id = k.user_id where k.key_hash = p_key_hash
    $$`.execute(db);
}
