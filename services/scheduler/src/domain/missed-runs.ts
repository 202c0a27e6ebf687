import { nextFiring, previousFiring } from './cron.ts';
import type { CronTimer } from './timers.ts';

/** At most this many missed due times of one task are listed one by one per firing; the last one listed says what followed. */
export const MISSED_LISTED_MAX = 1000;
/** Agent statuses in which its gateway takes a prompt: a hibernating (suspended) one is woken for it first. */
const AGENT_UP = new Set(['running', 'active', 'suspended']);
export const agentTakesPrompts = (status: string) => AGENT_UP.has(status);

export type MissedRunPolicy = 'skip' | 'run-once';

export interface MissedRun {
  due: Date;
  error: string;
}

/** What one task does at one firing: the due times it records as missed, the one it delivers (if any), and its next run. */
export interface FiringPlan {
  missed: MissedRun[];
  /** The due time delivered for now, and as what: on time, or caught up late by `run-once`. */
  deliver: { due: Date; status: 'delivered' | 'ran-late' } | null;
  /** The firing's own due time recorded as missed (and why), when nothing is delivered. */
  next: Date;
}

export interface PlanInput {
  timer: CronTimer;
  /** The task's nextRun: the first due time it has not settled. */
  nextRun: Date | null;
  policy: MissedRunPolicy;
  agentStatus: string;
  /** The firing's due time, and when the worker got to it. */
  due: Date;
  now: Date;
  /** A firing handled later than this after its due time counts as missed (the platform was down). */
  graceMs: number;
  /** The timer's next firing after `due`, when the caller has it (one per batch, not one per task). */
  nextAfterDue?: Date;
}

/**
 * Every due time from the task's nextRun up to the firing is accounted for, never silently:
 * - due times before the firing that no firing took (the scheduler or Redis was down) are `missed`;
 * - a firing handled within the grace is delivered (its agent stopped: `missed`, with the reason);
 * - a firing handled late (the platform was down at its due time) covers every due time up to now:
 *   with `skip` all are `missed`; with `run-once` the latest is delivered as `ran-late` and the
 *   others are `missed`. Its nextRun is then the first due time after now, so no later firing of
 *   the same outage delivers again.
 */
export function planFiring(input: PlanInput): FiringPlan {
  const { timer, due, now } = input;
  const late = now.getTime() - due.getTime() > input.graceMs;
  // The common case, with no cron arithmetic: a task on schedule, its firing on time, its agent up.
  if (
    !late &&
    input.nextAfterDue &&
    input.nextRun?.getTime() === due.getTime() &&
    agentTakesPrompts(input.agentStatus)
  ) {
    return { missed: [], deliver: { due, status: 'delivered' }, next: input.nextAfterDue };
  }
  const end = late ? now : due;
  const start = input.nextRun && input.nextRun.getTime() < due.getTime() ? input.nextRun : due;
  const dues: Date[] = [];
  let truncated = false;
  for (
    let at = nextFiring(timer.cronSchedule, new Date(start.getTime() - 1), timer.timezone);
    at.getTime() <= end.getTime();
    at = nextFiring(timer.cronSchedule, at, timer.timezone)
  ) {
    if (dues.length === MISSED_LISTED_MAX) {
      truncated = true;
      break;
    }
    dues.push(at);
  }
  // The latest due time of the window (found directly when the list stopped early), or the firing's own.
  const latest = truncated ? previousFiring(timer.cronSchedule, end, timer.timezone) : (dues.pop() ?? due);
  const earlier = dues.filter((at) => at.getTime() < latest.getTime());
  const next = nextFiring(timer.cronSchedule, end, timer.timezone);
  const agentDown = !agentTakesPrompts(input.agentStatus);
  const why = agentDown
    ? `the agent was ${input.agentStatus} at its due time`
    : late
      ? `the platform was not running at its due time (missed-run policy ${input.policy})`
      : 'the scheduler was not running at its due time';
  const missed = earlier.map((at) => ({
    due: at,
    error: agentDown || late ? why : 'the scheduler was not running at its due time',
  }));
  if (truncated && missed.length)
    missed[missed.length - 1]!.error += `; so was every due time after it and before ${latest.toISOString()}`;
  if (agentDown || (late && input.policy === 'skip'))
    return { missed: [...missed, { due: latest, error: why }], deliver: null, next };
  return { missed, deliver: { due: latest, status: late ? 'ran-late' : 'delivered' }, next };
}
