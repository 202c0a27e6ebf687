import t from 'tap';
import { setTimeout as delay } from 'node:timers/promises';
import { createQuietPeriod } from '../src/index.ts';

t.test('quiet period: background work waits until launches have stopped for a while', async (t) => {
  const quiet = createQuietPeriod(40);
  await quiet.whenQuiet();
  t.pass('quiet before any launch');

  let finish!: () => void;
  const launch = quiet.during(() => new Promise<void>((resolve) => { finish = resolve; }));
  let released = false;
  const waiting = quiet.whenQuiet().then(() => { released = true; });
  await delay(60);
  t.notOk(released, 'not while a launch runs');
  finish();
  await launch;
  const endedAt = Date.now();
  await delay(10);
  t.notOk(released, 'not right after it ends');
  await quiet.during(async () => {}); // another launch starts the period over
  await waiting;
  t.ok(Date.now() - endedAt >= 40, 'released once nothing launched for the whole period');
  await quiet.whenQuiet();
  t.pass('quiet again');
});

t.test('quiet period: a failing launch ends like any other', async (t) => {
  const quiet = createQuietPeriod(10);
  await t.rejects(quiet.during(async () => { throw new Error('engine down'); }), /engine down/);
  await quiet.whenQuiet();
  t.pass('released');
});
