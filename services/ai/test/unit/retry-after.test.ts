import t from 'tap';
import { retryAfterMsOf } from '../../src/domain/providers/wire.ts';

t.test("a provider's Retry-After, as the wait before the same call", async (t) => {
  const now = Date.parse('2026-11-27T12:00:00Z');
  t.equal(retryAfterMsOf({ 'retry-after': '3' }, now), 3000, 'seconds');
  t.equal(retryAfterMsOf({ 'retry-after': ' 0 ' }, now), 0, 'now');
  t.equal(retryAfterMsOf({ 'retry-after': 'Fri, 27 Nov 2026 12:00:05 GMT' }, now), 5000, 'an HTTP date');
  t.equal(retryAfterMsOf({ 'retry-after': 'Fri, 27 Nov 2026 11:59:00 GMT' }, now), 0, 'a date gone by: at once');
  t.equal(retryAfterMsOf({ 'retry-after-ms': '1500.5', 'retry-after': '9' }, now), 1501, "OpenAI's milliseconds first");
  t.equal(retryAfterMsOf({ 'retry-after': ['2', '7'] }, now), 2000, 'the first of a repeated header');
  for (const said of ['soon', '-1', '1.5e3', ''])
    t.equal(retryAfterMsOf({ 'retry-after': said }, now), undefined, `unreadable: ${JSON.stringify(said)}`);
  t.equal(retryAfterMsOf({ 'retry-after-ms': 'x' }, now), undefined, 'an unreadable retry-after-ms and no retry-after');
  t.equal(retryAfterMsOf({}, now), undefined, 'nothing said');
});
