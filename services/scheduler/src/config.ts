import { Type } from 'typebox';
import { loadConfig, Secret } from '@agentyard/config';

/** Settings of the scheduler service (scheduled prompts and heartbeats). */
export const schedulerSettings = {
  ENCRYPTION_KEYS: Secret({
    minLength: 40,
    description: "AES-256-GCM keys `id:base64key,...`, first is current: opens agents' hooks tokens",
  }),
  SCHEDULER_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 10,
    description: 'deliveries one scheduler worker runs at once (add workers to scale out)',
  }),
  SCHEDULER_BATCH_SIZE: Type.Integer({
    minimum: 1,
    maximum: 5000,
    default: 200,
    description:
      'scheduled prompts one batch job of a cron firing claims and delivers (one statement to claim, one to record)',
  }),
  SCHEDULER_WAKE_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 900_000,
    default: 240_000,
    description:
      'how long a delivery to a hibernating agent waits for the agents worker to wake it (a stopped agent boots) before it fails and is retried',
  }),
  SCHEDULER_DELIVERY_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 300_000,
    default: 30_000,
    description: "timeout of one prompt or heartbeat delivery to an agent's hooks",
  }),
  SCHEDULER_DELIVERY_ATTEMPTS: Type.Integer({
    minimum: 1,
    maximum: 50,
    default: 5,
    description: 'attempts per firing before a delivery is given up (recorded on the task)',
  }),
  SCHEDULED_TASKS_PER_USER_MAX: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 100,
    description:
      'scheduled prompts one user may have (enabled or not); creating one more answers 429 SCHEDULED_TASK_LIMIT',
  }),
  SCHEDULER_MIN_INTERVAL_SECONDS: Type.String({
    default: '*:60',
    pattern: '^(\\*|[a-z_]{1,32}):[0-9]{1,6}(,(\\*|[a-z_]{1,32}):[0-9]{1,6})*$',
    description:
      'least time between two firings of a scheduled prompt or heartbeat, by plan (plan:seconds,...; `*` for every other plan); a cron or frequency that fires more often answers 400',
  }),
  SCHEDULE_FAILURE_LIMIT: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 5,
    description:
      'failed runs in a row after which a scheduled prompt pauses itself, records why and mails its owner (enabling it again resets the count)',
  }),
  SCHEDULER_MISSED_GRACE_SECONDS: Type.Integer({
    minimum: 5,
    maximum: 86_400,
    default: 60,
    description:
      "a firing handled later than this after its due time was missed (the platform was down): recorded `missed`, or caught up once as `ran-late` by the task's missedRunPolicy",
  }),
  SCHEDULER_TURN_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 86_400_000,
    default: 600_000,
    description:
      "how long a delivered run waits for its agent's turn to end before the run is recorded failed; meanwhile a firing of the same task meets its overlapPolicy",
  }),
  SCHEDULER_OUTCOME_POLL_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 5000,
    description:
      "how often a delivered run's turn is looked up in its agent's transcript until it ends (answered or failed, with its reply, tokens and cost)",
  }),
  SCHEDULER_RUN_RETENTION_DAYS: Type.String({
    default: 'free:7,*:30',
    pattern: '^(\\*|[a-z_]{1,32}):[0-9]{1,5}(,(\\*|[a-z_]{1,32}):[0-9]{1,5})*$',
    description:
      "days the run rows of scheduled prompts are kept, by the owner's plan (plan:days,...; `*` for every other plan); a daily job purges older ones",
  }),
  SCHEDULER_RUN_PURGE_EVERY_MS: Type.Integer({
    minimum: 1000,
    maximum: 604_800_000,
    default: 86_400_000,
    description: 'how often the purge of old run rows runs (daily)',
  }),
  HEARTBEAT_IDLE_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 7,
    description:
      'a heartbeat pauses itself, saying why, when nobody has talked with its agent (web chat, channels) for more than this many days',
  }),
  SCHEDULER_RETRY_DELAY_MS: Type.Integer({
    minimum: 10,
    maximum: 3_600_000,
    default: 5000,
    description: 'first retry delay of a failed delivery; doubles per attempt',
  }),
};

export function loadSchedulerConfig(env?: Record<string, string | undefined>) {
  return loadConfig(schedulerSettings, env ? { env, files: false } : {});
}

export type SchedulerConfig = ReturnType<typeof loadSchedulerConfig>;

/** How a firing's delivery is retried, from the settings. */
export const deliveryPolicy = (config: SchedulerConfig) => ({
  attempts: config.SCHEDULER_DELIVERY_ATTEMPTS,
  retryDelayMs: config.SCHEDULER_RETRY_DELAY_MS,
});

/** How a delivered run's turn is followed, from the settings. */
export const turnFollowPolicy = (config: SchedulerConfig) => ({
  pollMs: config.SCHEDULER_OUTCOME_POLL_MS,
  turnTimeoutMs: config.SCHEDULER_TURN_TIMEOUT_MS,
});
