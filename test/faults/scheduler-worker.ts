import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import { startWorkerProcess } from './worker-process.ts';

/** A scheduler worker's environment on a PostgreSQL (`urls`) and Redis of a fault test's own. */
export function schedulerWorkerEnv(options: {
  urls: Record<string, string>;
  redisUrl: string;
  prefix: string;
  encryptionKeys: string;
  env?: Record<string, string>;
}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...options.urls,
    REDIS_URL: options.redisUrl,
    QUEUE_PREFIX: options.prefix,
    ENCRYPTION_KEYS: options.encryptionKeys,
    IDENTITY_SECRET: randomBytes(32).toString('base64url'),
    NODE_ENV: 'test',
    OPS_PORT: '0',
    ...options.env,
  };
}

/** A scheduler worker process, as `services/scheduler` runs it; resolves once it takes prompt jobs (it has reconciled and started). */
export const startSchedulerWorker = (
  env: NodeJS.ProcessEnv,
  queues: QueueSet,
  onExit?: Parameters<typeof startWorkerProcess>[4],
): Promise<ChildProcess> => startWorkerProcess('scheduler', QUEUES.scheduledPrompts, env, queues, onExit);
