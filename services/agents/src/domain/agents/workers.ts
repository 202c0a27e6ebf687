import { QUEUES, startWorker, createQueues } from '@agentyard/queue';
import type { AgentsConfig } from '../../config.ts';
import { processProvisioning, type ProvisionJob } from './provisioning.ts';
import { createRuntimeContext } from './runtime-context-system.ts';

type Log = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

/**
 * The agents service's queue workers: provisioning (many at once: a job mostly waits for a
 * gateway to become ready) and the lifecycle queue's reconciler, scheduled every RECONCILE_EVERY_MS.
 */
export async function startAgentWorkers(config: AgentsConfig, log: Log) {
  const context = createRuntimeContext(config, log);
  const options = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log };
  const provisioning = startWorker<ProvisionJob, string>(QUEUES.provisioning, (job) => processProvisioning(context.runtime, job), { ...options, concurrency: 32 });
  const lifecycle = startWorker<Record<string, never>, string>(QUEUES.lifecycle, async (job) => {
    if (job.name !== 'reconcile') return 'ignored';
    const { timedOut, orphans } = await context.runtime.reconcile(config.PROVISIONING_DEADLINE_MS);
    return `timed out ${timedOut.length}, orphans ${orphans.length}`;
  }, options);
  void context.runtime.topUpWarm();
  const queues = createQueues(options);
  await queues.get(QUEUES.lifecycle).upsertJobScheduler('reconcile', { every: config.RECONCILE_EVERY_MS }, { name: 'reconcile', data: {} });
  return {
    context,
    async close() {
      await Promise.all([provisioning.close(), lifecycle.close()]);
      await queues.close();
      await context.close();
    },
  };
}
