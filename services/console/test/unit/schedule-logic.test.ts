import t from 'tap';
import {
  formOf,
  instantOf,
  runStatusWords,
  scheduleBody,
  scheduleWords,
  timeZoneChoices,
  tomorrowAt,
  wallClockIn,
} from '../../src/schedule-form.ts';
import type { Task } from '../../src/types.ts';

t.test('wall clocks in a zone and back, daylight saving included', async (t) => {
  t.equal(wallClockIn(new Date('2026-07-01T07:00:00Z'), 'Europe/Berlin'), '2026-07-01T09:00');
  t.equal(instantOf('2026-07-01T09:00', 'Europe/Berlin'), '2026-07-01T07:00:00.000Z', 'summer: CEST');
  t.equal(instantOf('2026-12-01T09:00', 'Europe/Berlin'), '2026-12-01T08:00:00.000Z', 'winter: CET');
  t.equal(
    instantOf('2026-03-08T09:00', 'America/New_York'),
    '2026-03-08T13:00:00.000Z',
    'the spring-forward day itself',
  );
  t.equal(instantOf('2026-11-27T09:00', 'UTC'), '2026-11-27T09:00:00.000Z');
  t.equal(instantOf('2026-11-27 09:00', 'UTC'), null, 'not a datetime-local value');
  t.equal(
    tomorrowAt(9, 'Asia/Tokyo', new Date('2026-11-27T20:00:00Z')),
    '2026-11-29T09:00',
    "Tokyo's tomorrow is already the 29th",
  );
  const zones = timeZoneChoices('Europe/Berlin');
  t.ok(zones.includes('UTC') && zones.includes('Europe/Berlin'));
});

t.test("a form's body: a cron or a one-shot time, never both, with every field", async (t) => {
  const fresh = formOf(undefined, 'Europe/Berlin', new Date('2026-11-27T10:00:00Z'));
  t.match(fresh, {
    kind: /^repeating$/,
    cronSchedule: '0 9 * * *',
    timezone: /^Europe\/Berlin$/,
    runAt: '2026-11-28T09:00',
    missedRunPolicy: /^skip$/,
    overlapPolicy: /^skip$/,
  });
  t.same(scheduleBody({ ...fresh, name: 'n', prompt: 'p' }), {
    name: 'n',
    prompt: 'p',
    description: null,
    timezone: 'Europe/Berlin',
    missedRunPolicy: 'skip',
    overlapPolicy: 'skip',
    cronSchedule: '0 9 * * *',
  });
  const once = scheduleBody({ ...fresh, name: 'n', prompt: 'p', kind: 'once', missedRunPolicy: 'run-once' });
  t.equal(once.runAt, '2026-11-28T08:00:00.000Z', 'tomorrow 09:00 in Berlin');
  t.notOk('cronSchedule' in once);
  const task = {
    cronSchedule: null,
    runAt: '2026-11-28T08:00:00.000Z',
    timezone: 'Europe/Berlin',
    name: 'x',
    prompt: 'y',
    description: null,
    missedRunPolicy: 'skip',
    overlapPolicy: 'queue',
  } as unknown as Task;
  t.match(formOf(task), {
    kind: /^once$/,
    runAt: '2026-11-28T09:00',
    timezone: /^Europe\/Berlin$/,
    overlapPolicy: /^queue$/,
  });
  t.equal(scheduleWords(task), 'Once, 2026-11-28 09:00 (Europe/Berlin)');
  t.equal(scheduleWords({ cronSchedule: '0 9 * * 1', runAt: null, timezone: 'UTC' }), '0 9 * * 1 (UTC)');
  t.equal(runStatusWords('ran-late'), 'Ran late');
});
