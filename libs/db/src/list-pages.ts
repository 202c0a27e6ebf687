import { sql, type RawBuilder } from 'kysely';

/**
 * Keyset pages of a list ordered by (a timestamp, id): a page ends at a position, the next page
 * starts strictly after it, so rows inserted between two pages never shift what comes next (no row
 * twice, none skipped). The cursor a client holds is that position, opaque (base64url of `at|id`).
 */
export interface PagePosition {
  /** The row's timestamp in UTC with microseconds, as PostgreSQL stores it (a JS Date keeps only milliseconds). */
  at: string;
  id: string;
}

export type PageIdKind = 'uuid' | 'bigint' | 'text';

const AT = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$/;
const IDS: Record<PageIdKind, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  bigint: /^[1-9][0-9]{0,17}$/,
  text: /^[^\p{Cc}]{1,200}$/u,
};

export function encodeCursor(position: PagePosition): string {
  return Buffer.from(`${position.at}|${position.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or null when it is not one this code wrote (the caller answers 400). */
export function decodeCursor(cursor: string, idKind: PageIdKind): PagePosition | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  // The time never holds a `|`; a text id may, so only the first one separates.
  const split = text.indexOf('|');
  const [at, id] = split < 0 ? [text, ''] : [text.slice(0, split), text.slice(split + 1)];
  if (!AT.test(at) || !IDS[idKind].test(id) || encodeCursor({ at, id }) !== cursor) return null;
  return Number.isNaN(Date.parse(at)) ? null : { at, id };
}

/** The column as a page position's `at`: UTC, microseconds, the form `decodeCursor` accepts. */
export function positionAt(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** Rows strictly past `position` in the list's order (`desc`: older or smaller id; `asc`: newer or larger). */
export function pastPosition(
  column: string,
  idColumn: string,
  position: PagePosition,
  order: 'asc' | 'desc',
  idKind: PageIdKind,
): RawBuilder<boolean> {
  const id = sql`${position.id}::${sql.raw(idKind)}`;
  const comparison = order === 'desc' ? sql.raw('<') : sql.raw('>');
  return sql<boolean>`(${sql.ref(column)}, ${sql.ref(idColumn)}) ${comparison} (${position.at}::timestamptz, ${id})`;
}

/**
 * A page from `limit + 1` rows read in the list's order: the first `limit`, and the cursor of the
 * last of them when the extra row shows there is more (else null).
 */
export function pageOf<R>(
  rows: R[],
  limit: number,
  positionOf: (row: R) => PagePosition,
): { rows: R[]; nextCursor: string | null } {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: encodeCursor(positionOf(page[page.length - 1]!)) };
}
