import t from 'tap';
import { closestFiringsSeconds } from '../../src/domain/cron.ts';

t.test('the closest firings of an expression come from its fields, not its text', async (t) => {
  const cases: [string, number][] = [
    ['* * * * * *', 1],
    ['*/30 * * * * *', 30],
    ['0,30 * * * * *', 30],
    ['0-59/20 * * * * *', 20],
    ['5 * * * * *', 60],
    ['* * * * *', 60],
    ['0,1 * * * *', 60],
    ['0 * * * *', 3600],
    ['0 9,17 * * 1-5', 8 * 3600],
    ['15 3 * * *', 86_400],
    // 23:59:59 then 00:00:00 the next day: one second apart, though a minute apart within the day.
    ['0,59 0,59 0,23 * * *', 1],
  ];
  for (const [cron, seconds] of cases) t.equal(closestFiringsSeconds(cron), seconds, cron);
});
