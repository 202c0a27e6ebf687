export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Follows a list's cursors from the first page to the last (at most `maxPages`, so a cursor that
 * never ends fails the test instead of hanging it), running `between` after each page but the last.
 */
export async function walkPages<T>(
  fetchPage: (cursor: string | null) => Promise<Page<T>>,
  between: (pageNumber: number) => Promise<void> = async () => {},
  maxPages = 100,
): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await fetchPage(cursor);
    pages.push(page.items);
    cursor = page.nextCursor;
    if (cursor) await between(pages.length);
  } while (cursor && pages.length < maxPages);
  if (cursor) throw new Error(`still a next page after ${maxPages} pages`);
  return pages;
}

/**
 * Cursors a list must refuse with 400: not base64url, base64url of nonsense, a position with a bad
 * time, and (unless the list's ids are free text, where any id is one) a position with a bad id.
 */
export function malformedCursors(ids: 'uuid-or-number' | 'text' = 'uuid-or-number'): string[] {
  const b64 = (text: string) => Buffer.from(text).toString('base64url');
  const badTimes = [
    'not a cursor!',
    b64('garbage'),
    b64('yesterday|1'),
    b64('2026-13-45T99:99:99.000000Z|00000000-0000-4000-8000-000000000000'),
    `${b64('2026-01-01T00:00:00.000000Z|x')}A`,
  ];
  const badIds = [b64('2026-01-01T00:00:00.000000Z|not-an-id'), b64('2026-01-01T00:00:00.000000Z|1|2')];
  return ids === 'text' ? badTimes : [...badTimes, ...badIds];
}
