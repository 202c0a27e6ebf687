import t from 'tap';
import { createQuietPeriod } from '../../src/index.ts';

/** A clock the test moves by hand: a timer fires when the clock passes its time, never on its own. */
function handClock() {
  let now = 0;
  let last = 0;
  const pending = new Map<number, { at: number; fire: () => void }>();
  return {
    set(fire: () => void, ms: number) {
      pending.set(++last, { at: now + ms, fire });
      return last;
    },
    clear(timer: unknown) {
      pending.delete(timer as number);
    },
    /** Moves the clock on, fires what fell due, and lets what they resolved run. */
    async advance(ms: number) {
      now += ms;
      for (const [id, { at, fire }] of [...pending].sort(([, a], [, b]) => a.at - b.at)) {
        if (at > now) continue;
        pending.delete(id);
        fire();
      }
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

t.test('quiet period: background work waits until launches have stopped for a while', async (t) => {
  const clock = handClock();
  const quiet = createQuietPeriod(40, clock);
  await quiet.whenQuiet();
  t.pass('quiet before any launch');

  let finish!: () => void;
  const launch = quiet.during(
    () =>
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
  );
  let released = false;
  const waiting = quiet.whenQuiet().then(() => {
    released = true;
  });
  await clock.advance(60);
  t.notOk(released, 'not while a launch runs');
  finish();
  await launch;
  await clock.advance(30);
  t.notOk(released, 'not right after it ends');
  await quiet.during(async () => {}); // another launch starts the period over
  await clock.advance(30);
  t.notOk(released, 'the period starts over with each launch');
  await clock.advance(10);
  t.ok(released, 'released once nothing launched for the whole period');
  await waiting;
  await quiet.whenQuiet();
  t.pass('quiet again');
});

t.test('quiet period: a failing launch ends like any other', async (t) => {
  const clock = handClock();
  const quiet = createQuietPeriod(10, clock);
  await t.rejects(
    quiet.during(async () => {
      throw new Error('engine down');
    }),
    /engine down/,
  );
  let released = false;
  const waiting = quiet.whenQuiet().then(() => {
    released = true;
  });
  await clock.advance(9);
  t.notOk(released, 'waits for the period after a failure too');
  await clock.advance(1);
  await waiting;
  t.pass('released');
});

t.test('quiet period: on the platform timers, a launch releases the waiters after the period', async (t) => {
  const quiet = createQuietPeriod(1);
  await quiet.during(async () => {});
  await quiet.whenQuiet();
  t.pass('released by a real timer');
});
