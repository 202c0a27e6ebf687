import { Type } from 'typebox';
import { Nullable } from './common.ts';

/** Opaque: the `nextCursor` of the page before. A cursor the service did not write is 400. */
export const PageCursor = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'the nextCursor of the previous page (opaque)',
});
/** Rows per page: `fallback` when absent, at most `maximum`. */
export const PageLimit = (fallback = 50, maximum = 100) =>
  Type.Integer({
    minimum: 1,
    maximum,
    default: fallback,
    description: `rows per page (default ${fallback}, at most ${maximum})`,
  });
/** `limit` and `cursor`, spread into a list route's query. */
export const PageQueryFields = { limit: Type.Optional(PageLimit()), cursor: Type.Optional(PageCursor) };
export const PageQuery = Type.Object(PageQueryFields, { additionalProperties: false });
/** Beside a list: the cursor of the next page, null on the last one. */
export const NextCursor = Nullable(
  Type.String({ description: 'pass as `cursor` for the next page; null: this was the last page' }),
);
/** Response header carrying the next page's cursor where the list is the whole body (a bare array). */
export const NEXT_CURSOR_HEADER = 'x-next-cursor';
