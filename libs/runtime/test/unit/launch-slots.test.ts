import t from 'tap';
import { createLaunchSlots } from '../../src/index.ts';

/** A launch that runs until the test lets it finish. */
function heldLaunch(name: string, log: string[]) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    finish: () => finish(),
    work: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

t.test('launch slots: at most `size` at once, the rest in arrival order', async (t) => {
  const launch = createLaunchSlots(2);
  const log: string[] = [];
  const launches = ['a', 'b', 'c', 'd'].map((name) => heldLaunch(name, log));
  const results = launches.map((l) => launch(l.work));
  await settle();
  t.same(log, ['start a', 'start b'], 'two run, two wait');
  launches[1]!.finish();
  await settle();
  t.same(log.slice(2), ['end b', 'start c'], 'a freed slot goes to the first in line');
  launches[0]!.finish();
  launches[2]!.finish();
  launches[3]!.finish();
  t.same(await Promise.all(results), ['a', 'b', 'c', 'd'], "each caller gets its own launch's result");
  t.same(
    log.filter((l) => l.startsWith('start')),
    ['start a', 'start b', 'start c', 'start d'],
  );
});

t.test('launch slots: a failed launch frees its slot and reports its own error', async (t) => {
  const launch = createLaunchSlots(1);
  const failed = launch(async () => {
    throw new Error('engine refused');
  });
  const next = launch(async () => 'started');
  await t.rejects(failed, /engine refused/);
  t.equal(await next, 'started', 'the next launch ran');
});
