export {
  AGENT_CRASH_LOOP_MAIL_JOB,
  PLAN_ENFORCEMENT_JOB,
  QUEUES,
  WAKE_AGENT_JOB,
  wakeJobId,
  type AgentCrashLoopMailJob,
  type PlanEnforcementJob,
  type QueueName,
  type WakeAgentJob,
} from './names.ts';
export { agentActivity, type AgentActivity } from './agent-activity.ts';
export { jobWaiter, type JobWaiter } from './job-waiter.ts';
export { createQueues, QueueUnavailableError, type QueueSet, type QueueFactoryOptions } from './queues.ts';
export { startWorker, type WorkerOptions } from './workers.ts';
export {
  defineJobs,
  repeatingJobs,
  startJobWorkers,
  type JobCatalogue,
  type JobDefinition,
  type JobWorkers,
  type JobWorkersOptions,
} from './job-catalogue.ts';
export { jobOutcomes } from './job-outcomes.ts';
export { lookAgainLater } from './look-again.ts';
export { keepRepeatingJobs, type RepeatingJob } from './repeating-jobs.ts';
export { ClosableRedis, redisConnection, type RedisErrorLog } from './redis.ts';
export { Job, UnrecoverableError, type Processor, type Queue, type Worker, type JobsOptions } from 'bullmq';
