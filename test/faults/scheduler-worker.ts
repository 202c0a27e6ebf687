import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { QUEUES, type QueueSet } from '@agentyard/queue';

/** A scheduler worker's environment on a PostgreSQL (`urls`) and Redis of a fault test's own. */
export function schedulerWorkerEnv(options: { urls: Record<string, string>; redisUrl: string; prefix: string; encryptionKeys: string; env?: Record<string, string> }): NodeJS.ProcessEnv {
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

/**
 * A scheduler worker process, as `services/scheduler` runs it; resolves once it takes jobs (its
 * blocking connection appears among the prompt queue's workers once it has reconciled and started).
 * `onExit` hears how it ended, whoever ended it.
 */
export async function startSchedulerWorker(
  env: NodeJS.ProcessEnv,
  queues: QueueSet,
  onExit?: (child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) => void,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(repoRoot, 'services/scheduler/src/worker.ts')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (onExit) child.once('exit', (code, signal) => onExit(child, code, signal));
  const prompts = queues.get(QUEUES.scheduledPrompts);
  while ((await prompts.getWorkersCount()) < 1) {
    if (child.exitCode !== null) throw new Error(`the scheduler worker exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return child;
}
