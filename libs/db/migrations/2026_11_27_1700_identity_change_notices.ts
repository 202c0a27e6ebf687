import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code.
// The edge keeps the identities it resolved (by the hash of the cookie's token or of the `sk_` key)
// in memory while it hears of every change that could end or alter one: a notice on the channel
// agentyard_identity, sent when the changing transaction commits, `token:<hash>` when a session or
// API key row changes or goes (sign-out, password change, security event, key deletion, and the
// cascade of an account's deletion), `user:<id>` when an address or its verification changes (admin
// rights follow a verified address). Triggers rather than calls in each service, so no path that
// revokes can forget to tell. auth_session_identity also answers when the session expires, so an
// identity kept in memory is not used past it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function notify_identity_change() returns trigger
    language plpgsql as $$
    begin
      if tg_table_name = 'sessions' then
        perform pg_notify('agentyard_identity', 'token:' || old.token_hash);
      elsif tg_table_name = 'api_keys' then
        perform pg_notify('agentyard_identity', 'token:' || old.key_hash);
      else
        perform pg_notify('agentyard_identity', 'user:' || old.id::text);
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`create trigger sessions_identity_notice after update of token_hash, user_id, expires_at or delete on sessions
    for each row execute function notify_identity_change()`.execute(db);
  await sql`create trigger api_keys_identity_notice after update of key_hash, user_id or delete on api_keys
    for each row execute function notify_identity_change()`.execute(db);
  await sql`create trigger users_identity_notice after update of email, email_verified_at or delete on users
    for each row execute function notify_identity_change()`.execute(db);

  await sql`drop function auth_session_identity(text)`.execute(db);
  await sql`
    create function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text, email_verified boolean, expires_at timestamptz)
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return query select s.id, u.id, u.email, u.email_verified_at is not null, s.expires_at from sessions s join users u on u.id = s.user_id
        where s.token_hash = p_token_hash and s.expires_at > now();
    end
    $$`.execute(db);
  await sql`revoke all on function auth_session_identity(text) from public`.execute(db);
  await sql`grant execute on function auth_session_identity(text) to agentyard_app, agentyard_system`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function auth_session_identity(text)`.execute(db);
  await sql`
    create function auth_session_identity(p_token_hash text)
    returns table (session_id uuid, user_id uuid, email text, email_verified boolean)
    language plpgsql stable security definer set search_path = public, pg_temp as $$
    begin
      return query select s.id, u.id, u.email, u.email_verified_at is not null from sessions s join users u on u.id = s.user_id
        where s.token_hash = p_token_hash and s.expires_at > now();
    end
    $$`.execute(db);
  await sql`grant execute on function auth_session_identity(text) to agentyard_app, agentyard_system`.execute(db);
  await sql`drop trigger if exists users_identity_notice on users`.execute(db);
  await sql`drop trigger if exists api_keys_identity_notice on api_keys`.execute(db);
  await sql`drop trigger if exists sessions_identity_notice on sessions`.execute(db);
  await sql`drop function if exists notify_identity_change()`.execute(db);
}
