import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import { QUEUES, type QueueSet } from '@agentyard/queue';

/**
 * An agents worker process, as `services/agents` runs it (`env`: the run's platform with a test
 * file's own queue prefix and runtime instance); resolves once it takes lifecycle jobs (its blocking
 * connection appears among the lifecycle queue's workers).
 */
export async function startAgentsWorker(env: NodeJS.ProcessEnv, queues: QueueSet): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(repoRoot, 'services/agents/src/worker.ts')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const lifecycle = queues.get(QUEUES.lifecycle);
  while ((await lifecycle.getWorkersCount()) < 1) {
    if (child.exitCode !== null) throw new Error(`the agents worker exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return child;
}
