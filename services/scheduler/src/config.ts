import { Type } from 'typebox';
import { loadConfig, Secret } from '@agentyard/config';

/** Settings of the scheduler service (scheduled prompts and heartbeats). */
export const schedulerSettings = {
  ENCRYPTION_KEYS: Secret({ minLength: 40, description: "AES-256-GCM keys `id:base64key,...`, first is current: opens agents' hooks tokens" }),
  SCHEDULER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: 'deliveries one scheduler worker runs at once (add workers to scale out)' }),
  SCHEDULER_BATCH_SIZE: Type.Integer({
    minimum: 1,
    maximum: 5000,
    default: 200,
    description: 'scheduled prompts one batch job of a cron firing claims and delivers (one statement to claim, one to record)',
  }),
  SCHEDULER_DELIVERY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 30_000, description: "timeout of one prompt or heartbeat delivery to an agent's hooks" }),
  SCHEDULER_DELIVERY_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'attempts per firing before a delivery is given up (recorded on the task)' }),
  SCHEDULED_TASKS_PER_USER_MAX: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 100,
    description: 'scheduled prompts one user may have (enabled or not); creating one more answers 429 SCHEDULED_TASK_LIMIT',
  }),
  SCHEDULER_MIN_INTERVAL_SECONDS: Type.String({
    default: '*:60',
    pattern: '^(\\*|[a-z_]{1,32}):[0-9]{1,6}(,(\\*|[a-z_]{1,32}):[0-9]{1,6})*$',
    description: 'least time between two firings of a scheduled prompt or heartbeat, by plan (plan:seconds,...; `*` for every other plan); a cron or frequency that fires more often answers 400',
  }),
  SCHEDULER_RETRY_DELAY_MS: Type.Integer({ minimum: 10, maximum: 3_600_000, default: 5000, description: 'first retry delay of a failed delivery; doubles per attempt' }),
};

export function loadSchedulerConfig(env?: Record<string, string | undefined>) {
  return loadConfig(schedulerSettings, env ? { env, files: false } : {});
}

export type SchedulerConfig = ReturnType<typeof loadSchedulerConfig>;

/** How a firing's delivery is retried, from the settings. */
export const deliveryPolicy = (config: SchedulerConfig) => ({ attempts: config.SCHEDULER_DELIVERY_ATTEMPTS, retryDelayMs: config.SCHEDULER_RETRY_DELAY_MS });
