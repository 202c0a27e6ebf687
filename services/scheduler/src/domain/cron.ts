import { CronExpressionParser } from 'cron-parser';
import { SchedulerErrors } from '../errors.ts';

/**
 * Checks a 5-field (minute-level) or 6-field (with seconds) cron expression with the same parser
 * BullMQ fires by, read in the IANA zone `timezone`, and answers its next firing after `from`.
 *
 * Daylight saving (the parser's rule, which BullMQ's job scheduler follows too): a wall-clock time
 * that does not exist on a spring-forward day fires once, shifted forward by the gap (02:30 in
 * Berlin on 2026-03-29 fires at 03:30 CEST); a time that exists twice on a fall-back day fires
 * once, at its first occurrence (02:30 CEST on 2026-10-25, not again at 02:30 CET).
 */
export function nextFiring(expression: string, from = new Date(), timezone = 'UTC'): Date {
  const fields = expression.trim().split(/\s+/);
  if (fields.length < 5 || fields.length > 6) throw SchedulerErrors.invalidCron('expected 5 or 6 fields');
  try {
    return CronExpressionParser.parse(fields.join(' '), { currentDate: from, tz: timezone }).next().toDate();
  } catch (error) {
    throw SchedulerErrors.invalidCron((error as Error).message);
  }
}

/** The expression's last firing at or before `at`, in its zone (the expression was checked when stored). */
export function previousFiring(expression: string, at: Date, timezone = 'UTC'): Date {
  return CronExpressionParser.parse(normalizeCron(expression), {
    currentDate: new Date(at.getTime() + 1),
    tz: timezone,
  })
    .prev()
    .toDate();
}

/** The expression as BullMQ is given it: fields separated by single spaces. */
export const normalizeCron = (expression: string) => expression.trim().split(/\s+/).join(' ');

const DAY_SECONDS = 86_400;

/**
 * The least time in seconds between two firings of a valid expression, from the parser's own
 * fields (not the text): every day that fires, fires at each (hour, minute, second) of the fields,
 * so the closest firings are neighbours among those times of day, or the day's last and the next
 * day's first (counted as if the next day fires too: a bound that never lets a burst through).
 */
export function closestFiringsSeconds(expression: string): number {
  const { second, minute, hour } = CronExpressionParser.parse(expression, { tz: 'UTC' }).fields;
  const ascending = (values: readonly (number | string)[]) => values.map(Number).sort((a, b) => a - b);
  const [hours, minutes, seconds] = [ascending(hour.values), ascending(minute.values), ascending(second.values)];
  let first = -1;
  let previous = -1;
  let closest = DAY_SECONDS;
  // Hours, then minutes, then seconds, each ascending: the times of day come out in order.
  for (const h of hours) {
    for (const m of minutes) {
      for (const s of seconds) {
        const at = h * 3600 + m * 60 + s;
        if (previous >= 0) closest = Math.min(closest, at - previous);
        else first = at;
        previous = at;
      }
    }
  }
  return Math.min(closest, DAY_SECONDS - previous + first);
}
