import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { repoRoot } from '@agentyard/config';
import type { QueueName, QueueSet } from '@agentyard/queue';

/**
 * A service's worker process (`services/<service>/src/worker.ts`) as the service runs it; resolves
 * once it takes jobs (its blocking connection appears among `queue`'s workers). `onExit` hears how
 * it ended, whoever ended it.
 */
export async function startWorkerProcess(
  service: string,
  queue: QueueName,
  env: NodeJS.ProcessEnv,
  queues: QueueSet,
  onExit?: (child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) => void,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(repoRoot, `services/${service}/src/worker.ts`)], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (onExit) child.once('exit', (code, signal) => onExit(child, code, signal));
  while ((await queues.get(queue).getWorkersCount()) < 1) {
    if (child.exitCode !== null) throw new Error(`the ${service} worker exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return child;
}

/** Kills (SIGKILL) whichever of `workers` still run: a fault test's teardown. */
export async function killWorkers(workers: readonly ChildProcess[]): Promise<void> {
  for (const child of workers)
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
}
