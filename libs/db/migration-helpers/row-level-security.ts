import { sql, type Kysely } from 'kysely';

// Shared by migrations, so frozen like them: never change what a function here does (a migration
// that ran must mean the same thing forever); add a new function instead.

/** The signed-in user of the current transaction, as `withUser` sets it (null outside one). */
export const USER_ID = sql.raw(`nullif(current_setting('app.user_id', true), '')::uuid`);

/** Row-level security on a table with a `user_id` column: each user sees and writes only their rows. */
export async function ownedByUser(db: Kysely<any>, table: string): Promise<void> {
  await sql`alter table ${sql.id(table)} enable row level security`.execute(db);
  await sql`alter table ${sql.id(table)} force row level security`.execute(db);
  await sql`create policy ${sql.id(`${table}_owner`)} on ${sql.id(table)} using (user_id = ${USER_ID}) with check (user_id = ${USER_ID})`.execute(db);
}
