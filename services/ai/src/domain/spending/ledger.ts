import { decodeCursor, pageOf, pastPosition, positionAt, sql, type Database, type Kysely } from '@agentyard/db';
import type { CreditKind } from '@agentyard/db';

/** A ledger entry to add; `amountUsd` is its size: the kind gives the sign (purchase and grant add, usage and refund take). */
export interface NewCreditEntry {
  userId: string;
  kind: CreditKind;
  amountUsd: number;
  note: string;
  /** What caused it (`stripe:evt_…`, `local-checkout:…`): an entry with a source already in the ledger is not added again. */
  source: string;
}

const signOf = (kind: CreditKind) => (kind === 'purchase' || kind === 'grant' ? 1 : -1);

/**
 * Appends one entry (never updates one: the ledger is append-only, its balance the sum). Idempotent
 * on `source`: `added` is false when that cause was already applied. Works on the user's own
 * transaction and on the system connection.
 */
export async function addCreditEntry(
  db: Kysely<Database>,
  entry: NewCreditEntry,
): Promise<{ id: string; added: boolean }> {
  if (!Number.isFinite(entry.amountUsd)) throw new Error('credit entry amount must be a finite number');
  const amount = (signOf(entry.kind) * Math.abs(entry.amountUsd)).toFixed(8);
  const inserted = await db
    .insertInto('credit_entries')
    .values({
      user_id: entry.userId,
      kind: entry.kind,
      amount_usd: amount,
      note: entry.note,
      source: entry.source,
      usage_month: null,
    })
    .onConflict((oc) => oc.column('source').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { id: inserted.id, added: true };
  const existing = await db
    .selectFrom('credit_entries')
    .select('id')
    .where('source', '=', entry.source)
    .executeTakeFirstOrThrow();
  return { id: existing.id, added: false };
}

/** The user's credits balance in USD: the sum of the ledger. */
export async function creditBalanceUsd(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db
    .selectFrom('credit_entries')
    .select(sql<string>`coalesce(sum(amount_usd), 0)`.as('balance'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.balance ?? 0);
}

/**
 * Credits a month's spend beyond the allowance may draw on: the balance without that month's own
 * usage entries (they settle the very spend the gateway's counters already hold).
 */
export async function creditPoolUsd(db: Kysely<Database>, userId: string, month: string): Promise<number> {
  const row = await db
    .selectFrom('credit_entries')
    .select(
      sql<string>`coalesce(sum(amount_usd) filter (where usage_month is distinct from ${month}::date), 0)`.as('pool'),
    )
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.pool ?? 0);
}

export interface CreditEntryView {
  id: string;
  kind: CreditKind;
  amountUsd: number;
  createdAt: string;
  note: string;
}

/** One page of the user's ledger, newest first; `nextCursor` null on the last page. Throws `badCursor` for a cursor it did not make. */
export async function creditEntriesPage(
  db: Kysely<Database>,
  userId: string,
  options: { limit: number; cursor?: string; badCursor: () => Error },
): Promise<{ entries: CreditEntryView[]; nextCursor: string | null }> {
  const after = options.cursor === undefined ? null : decodeCursor(options.cursor, 'uuid');
  if (options.cursor !== undefined && !after) throw options.badCursor();
  let query = db
    .selectFrom('credit_entries')
    .select(['id', 'kind', 'amount_usd', 'created_at', 'note', positionAt('created_at').as('position_at')])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit + 1);
  if (after) query = query.where(pastPosition('created_at', 'id', after, 'desc', 'uuid'));
  const page = pageOf(await query.execute(), options.limit, (r) => ({ at: r.position_at, id: r.id }));
  return {
    entries: page.rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      amountUsd: Number(r.amount_usd),
      createdAt: r.created_at.toISOString(),
      note: r.note,
    })),
    nextCursor: page.nextCursor,
  };
}
