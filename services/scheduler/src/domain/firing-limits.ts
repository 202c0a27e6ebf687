import { currentPlan, type UserTx } from '@agentyard/db';
import { SchedulerErrors } from '../errors.ts';
import { closestFiringsSeconds } from './cron.ts';

/** What one user may schedule: how many tasks, and how close together firings may come by plan. */
export interface SchedulingLimits {
  tasksPerUser: number;
  /** Seconds by plan; `*` for every plan not named. */
  minIntervalSeconds: Map<string, number>;
  /** Subscription statuses that count as active (SUBSCRIPTION_ACTIVE_STATUSES). */
  activeStatuses: readonly string[];
}

/** The caller whose plan the limits follow. */
export interface SchedulingCaller {
  userId: string;
  admin: boolean;
}

/** `solo:60,*:60` (the config schema has checked the shape). */
export function parseMinIntervals(setting: string): Map<string, number> {
  return new Map(
    setting.split(',').map((entry) => {
      const [plan, seconds] = entry.split(':') as [string, string];
      return [plan, Number(seconds)];
    }),
  );
}

/** The plan a user's limits follow (currentPlan: admins network's, else the active subscription's); none is `free`. */
async function planOf(trx: UserTx, caller: SchedulingCaller, limits: SchedulingLimits): Promise<string> {
  return (
    (await currentPlan(trx, caller.userId, { admin: caller.admin, activeStatuses: limits.activeStatuses })) ?? 'free'
  );
}

async function minimumFor(trx: UserTx, caller: SchedulingCaller, limits: SchedulingLimits) {
  const plan = await planOf(trx, caller, limits);
  return { plan, seconds: limits.minIntervalSeconds.get(plan) ?? limits.minIntervalSeconds.get('*') ?? 60 };
}

/** 400 when the cron expression can fire closer together than the caller's plan allows. */
export async function checkCronInterval(
  trx: UserTx,
  caller: SchedulingCaller,
  limits: SchedulingLimits,
  cronSchedule: string,
): Promise<void> {
  const gap = closestFiringsSeconds(cronSchedule);
  const minimum = await minimumFor(trx, caller, limits);
  if (gap < minimum.seconds)
    throw SchedulerErrors.tooFrequent(`cronSchedule "${cronSchedule}"`, gap, minimum.plan, minimum.seconds);
}

/** 400 when a heartbeat every `everyMs` comes more often than the caller's plan allows. */
export async function checkHeartbeatInterval(
  trx: UserTx,
  caller: SchedulingCaller,
  limits: SchedulingLimits,
  frequency: string,
  everyMs: number,
): Promise<void> {
  const minimum = await minimumFor(trx, caller, limits);
  if (everyMs < minimum.seconds * 1000)
    throw SchedulerErrors.tooFrequent(`A heartbeat every ${frequency}`, everyMs / 1000, minimum.plan, minimum.seconds);
}
