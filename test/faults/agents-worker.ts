import type { ChildProcess } from 'node:child_process';
import { QUEUES, type QueueSet } from '@agentyard/queue';
import { startWorkerProcess } from './worker-process.ts';

/**
 * An agents worker process, as `services/agents` runs it (`env`: the run's platform with a test
 * file's own queue prefix and runtime instance); resolves once it takes lifecycle jobs.
 */
export const startAgentsWorker = (env: NodeJS.ProcessEnv, queues: QueueSet): Promise<ChildProcess> =>
  startWorkerProcess('agents', QUEUES.lifecycle, env, queues);
