export { QUEUES, type QueueName } from './names.ts';
export { createQueues, QueueUnavailableError, type QueueSet, type QueueFactoryOptions } from './queues.ts';
export { startWorker, type WorkerOptions } from './workers.ts';
export { jobOutcomes } from './job-outcomes.ts';
export { lookAgainLater } from './look-again.ts';
export { redisConnection, type RedisErrorLog } from './redis.ts';
export { Job, UnrecoverableError, type Processor, type Queue, type Worker, type JobsOptions } from 'bullmq';
