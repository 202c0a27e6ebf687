import { CronExpressionParser } from 'cron-parser';
import { SchedulerErrors } from '../errors.ts';

/**
 * Checks a 5-field (minute-level) or 6-field (with seconds) cron expression with the same parser
 * BullMQ fires by, in UTC, and answers its next firing after `from`.
 */
export function nextFiring(expression: string, from = new Date()): Date {
  const fields = expression.trim().split(/\s+/);
  if (fields.length < 5 || fields.length > 6) throw SchedulerErrors.invalidCron('expected 5 or 6 fields');
  try {
    return CronExpressionParser.parse(fields.join(' '), { currentDate: from, tz: 'UTC' }).next().toDate();
  } catch (error) {
    throw SchedulerErrors.invalidCron((error as Error).message);
  }
}

/** The expression as BullMQ is given it: fields separated by single spaces. */
export const normalizeCron = (expression: string) => expression.trim().split(/\s+/).join(' ');
