import t from 'tap';
import { groupCommit } from '../../src/domain/group-commit.ts';

/** A write that holds until the test lets it go, recording what each write carried. */
function heldWrites() {
  const writes: { items: number[]; release: () => void; fail: (error: Error) => void }[] = [];
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      writes.push({ items, release: resolve, fail: reject });
    });
  return { writes, write };
}
const settledOf = (promise: Promise<void>) => {
  const state = { settled: false as boolean | 'failed' };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = 'failed'),
  );
  return state;
};
const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('the first item is written at once; items that come meanwhile are written together next', async (t) => {
  const { writes, write } = heldWrites();
  const commit = groupCommit(write);
  const first = settledOf(commit(1));
  await tick();
  t.same(
    writes.map((w) => w.items),
    [[1]],
    'written alone, at once',
  );
  const later = [2, 3, 4].map((n) => settledOf(commit(n)));
  await tick();
  t.equal(writes.length, 1, 'nothing else is written while the first write is under way');
  t.notOk(first.settled, 'and no caller goes on before its write ends');
  writes[0]!.release();
  await tick();
  t.equal(first.settled, true, 'the first caller goes on once its write ended');
  t.same(writes[1]?.items, [2, 3, 4], 'the three that came meanwhile: one write');
  t.same(
    later.map((s) => s.settled),
    [false, false, false],
    'their callers still wait for it',
  );
  writes[1]!.release();
  await tick();
  t.same(
    later.map((s) => s.settled),
    [true, true, true],
  );
  // Idle again: the next item is written at once, alone.
  const again = settledOf(commit(5));
  await tick();
  t.same(writes[2]?.items, [5]);
  writes[2]!.release();
  await tick();
  t.equal(again.settled, true);
});

t.test("a failed write fails its group's callers only; the next group is still written", async (t) => {
  const { writes, write } = heldWrites();
  const commit = groupCommit(write);
  const first = settledOf(commit(1));
  await tick();
  const second = settledOf(commit(2));
  writes[0]!.fail(new Error('the database did not answer'));
  await tick();
  t.equal(first.settled, 'failed', "the failed write's caller hears of it");
  t.same(writes[1]?.items, [2], 'the item that came meanwhile is written next');
  writes[1]!.release();
  await tick();
  t.equal(second.settled, true);
});
