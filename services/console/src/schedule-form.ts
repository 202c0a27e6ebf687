// The schedules page's logic: time zones, one-shot times entered as a wall clock in a zone, the
// request a form makes, and run statuses in words. Pure, so the console's logic tests run it.
import type { HeartbeatRuns, Run, Task } from './types.ts';

/** The browser's own IANA zone (UTC when it names none). */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Every zone the browser knows, UTC and `current` among them, sorted. */
export function timeZoneChoices(current: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return [...new Set(['UTC', current, ...known])].sort((a, b) => a.localeCompare(b));
}

/** A wall-clock time of `zone` at `instant`, as `datetime-local` holds it (YYYY-MM-DDTHH:mm). */
export function wallClockIn(instant: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

/**
 * The instant a wall-clock time names in `zone` (ISO), or null when it is not one. The zone's
 * offset is found by trying: the time read as UTC, corrected by the offset there, twice (a time in
 * a daylight-saving gap lands just after it, as the scheduler's own rule does).
 */
export function instantOf(wallClock: string, zone: string): string | null {
  const match = WALL_CLOCK.exec(wallClock);
  if (!match) return null;
  const [, y, mo, d, h, mi] = match.map(Number) as number[];
  const asUtc = Date.UTC(y!, mo! - 1, d!, h!, mi!);
  if (Number.isNaN(asUtc)) return null;
  const offsetAt = (instant: number) => {
    const shown = WALL_CLOCK.exec(wallClockIn(new Date(instant), zone))!
      .slice(1)
      .map(Number) as number[];
    return Date.UTC(shown[0]!, shown[1]! - 1, shown[2]!, shown[3]!, shown[4]!) - Math.floor(instant / 60_000) * 60_000;
  };
  let guess = asUtc - offsetAt(asUtc);
  guess = asUtc - offsetAt(guess);
  return new Date(guess).toISOString();
}

/** Tomorrow at `hour`:00 in `zone`, as a `datetime-local` value ("remind me tomorrow at 9"). */
export function tomorrowAt(hour: number, zone: string, now = new Date()): string {
  const tomorrow = wallClockIn(new Date(now.getTime() + 86_400_000), zone).slice(0, 10);
  return `${tomorrow}T${String(hour).padStart(2, '0')}:00`;
}

export interface ScheduleForm {
  name: string;
  prompt: string;
  description: string;
  kind: 'repeating' | 'once';
  cronSchedule: string;
  /** `datetime-local` value, read in `timezone`. */
  runAt: string;
  timezone: string;
  missedRunPolicy: 'skip' | 'run-once';
  overlapPolicy: 'skip' | 'queue';
}

/** A form filled from a task (to edit it), or with defaults (a new one in the browser's zone). */
export function formOf(task?: Task, zone = browserTimeZone(), now = new Date()): ScheduleForm {
  const timezone = task?.timezone ?? zone;
  return {
    name: task?.name ?? '',
    prompt: task?.prompt ?? '',
    description: task?.description ?? '',
    kind: task?.runAt ? 'once' : 'repeating',
    cronSchedule: task?.cronSchedule ?? '0 9 * * *',
    runAt: task?.runAt ? wallClockIn(new Date(task.runAt), timezone) : tomorrowAt(9, timezone, now),
    timezone,
    missedRunPolicy: task?.missedRunPolicy ?? 'skip',
    overlapPolicy: task?.overlapPolicy ?? 'skip',
  };
}

/** The body a form sends: a cron or a one-shot time (never both), and every other field. */
export function scheduleBody(form: ScheduleForm): Record<string, string | null> {
  const body: Record<string, string | null> = {
    name: form.name,
    prompt: form.prompt,
    description: form.description.trim() ? form.description : null,
    timezone: form.timezone,
    missedRunPolicy: form.missedRunPolicy,
    overlapPolicy: form.overlapPolicy,
  };
  if (form.kind === 'once') body.runAt = instantOf(form.runAt, form.timezone) ?? form.runAt;
  else body.cronSchedule = form.cronSchedule.trim();
  return body;
}

const RUN_WORDS: Record<Run['status'], string> = {
  pending: 'Waiting to run',
  delivered: 'Delivered',
  answered: 'Answered',
  failed: 'Failed',
  missed: 'Missed',
  'ran-late': 'Ran late',
  'skipped-overlap': 'Skipped (previous run still going)',
  'skipped-no-credits': 'Skipped (no credits)',
};

/** A run's status in words. */
export const runStatusWords = (status: Run['status']) => RUN_WORDS[status];

const HEARTBEAT_WORDS: Record<HeartbeatRuns['runs'][number]['status'], string> = {
  delivered: 'Delivered',
  failed: 'Failed',
  'skipped-no-credits': 'Skipped (no credits)',
  'skipped-spend-limit': 'Skipped (spend limit reached)',
  'skipped-idle': 'Paused (nobody talked with the agent lately)',
};

/** A heartbeat run's status in words. */
export const heartbeatStatusWords = (status: HeartbeatRuns['runs'][number]['status']) => HEARTBEAT_WORDS[status];

/** When a task fires, in words: its cron and zone, or its one time. */
export function scheduleWords(task: Pick<Task, 'cronSchedule' | 'runAt' | 'timezone'>): string {
  if (task.runAt)
    return `Once, ${wallClockIn(new Date(task.runAt), task.timezone).replace('T', ' ')} (${task.timezone})`;
  return `${task.cronSchedule} (${task.timezone})`;
}
