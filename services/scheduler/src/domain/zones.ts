import { SchedulerErrors } from '../errors.ts';

/** The runtime's zone names by lower case, to store a known name in its usual spelling. */
let known: Map<string, string> | undefined;

/**
 * An IANA time zone the runtime knows, or a 400 naming what was given. A name of the runtime's list
 * is stored as the list spells it (`europe/berlin` is `Europe/Berlin`); another name the runtime
 * accepts keeps the user's spelling (ICU lists `Asia/Calcutta`, not the `Asia/Kolkata` people pick).
 * Offsets (`+02:00`) are not zones: they do not follow daylight saving.
 */
export function timeZoneOf(name: string): string {
  if (!/^[A-Za-z]/.test(name)) throw SchedulerErrors.invalidTimeZone(name);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    throw SchedulerErrors.invalidTimeZone(name);
  }
  known ??= new Map(['UTC', ...Intl.supportedValuesOf('timeZone')].map((zone) => [zone.toLowerCase(), zone]));
  return known.get(name.toLowerCase()) ?? name;
}
