import { sql, type Kysely } from 'kysely';

// Frozen in time: no imports of application code. Role names are the platform's fixed role names.
const APP = 'agentyard_app';

export async function up(db: Kysely<any>): Promise<void> {
  // An OAuth flow is tied to the browser that started it (login-CSRF): the hash of a random value
  // that browser holds in a cookie. Flows in progress live ten minutes and cannot be tied afterwards.
  await sql`delete from oauth_states`.execute(db);
  await sql`alter table oauth_states add column browser_binding_hash text not null`.execute(db);

  // Consumes an invite for the user of the caller's row-level context, in the caller's transaction.
  // The conditional update takes the row lock, so two concurrent callers cannot both consume it;
  // each statement of a volatile plpgsql function sees what committed before it, so the loser reads `used`.
  await sql`
    create function auth_consume_invite(p_token_hash text)
    returns text
    language plpgsql volatile security definer set search_path = public, pg_temp as $$
    declare
      consumer uuid := nullif(current_setting('app.user_id', true), '')::uuid;
    begin
      if consumer is null then
        raise exception 'auth_consume_invite needs app.user_id';
      end if;
      update invites set used_at = now(), used_by = consumer
        where token_hash = p_token_hash and used_at is null and expires_at > now();
      if found then
        return 'consumed';
      end if;
      if exists (select 1 from invites where token_hash = p_token_hash and used_at is not null) then
        return 'used';
      end if;
      return 'missing';
    end
    $$`.execute(db);
  await sql`revoke all on function auth_consume_invite(text) from public`.execute(db);
  await sql`grant execute on function auth_consume_invite(text) to ${sql.id(APP)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists auth_consume_invite(text)`.execute(db);
  await sql`alter table oauth_states drop column if exists browser_binding_hash`.execute(db);
}
