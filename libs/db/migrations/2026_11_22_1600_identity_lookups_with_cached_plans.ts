import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// The edge resolves a caller on every request with one of these lookups. As `language sql` functions
// with a SET clause they cannot be inlined, so PostgreSQL parsed and planned their body on every
// call (~190 µs); as plpgsql the plan is cached per connection (~25 µs). Same results, same owner,
// same grants (create or replace keeps them).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text)
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return query select s.id, u.id, u.email from sessions s join users u on u.id = s.user_id
        where s.token_hash = p_token_hash and s.expires_at > now();
    end
    $$`.execute(db);
  await sql`
    create or replace function auth_api_key_identity(p_key_hash text)
    returns table (key_id uuid, user_id uuid, email text)
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return query select k.id, u.id, u.email from api_keys k join users u on u.id = k.user_id where k.key_hash = p_key_hash;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text)
    language sql stable security definer set search_path = public, pg_temp as $$
      select s.id, u.id, u.email from sessions s join users u on u.id = s.user_id
      where s.token_hash = p_token_hash and s.expires_at > now()
    $$`.execute(db);
  await sql`
    create or replace function auth_api_key_identity(p_key_hash text)
    returns table (key_id uuid, user_id uuid, email text)
    language sql stable security definer set search_path = public, pg_temp as $$
      select k.id, u.id, u.email from api_keys k join users u on u.id = k.user_id where k.key_hash = p_key_hash
    $$`.execute(db);
}
