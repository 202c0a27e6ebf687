import { QUEUES, startWorker, createQueues, type Job } from '@agentyard/queue';
import type { AgentsConfig } from '../../config.ts';
import { processConfigApply, type ConfigApplyJob } from './config-apply.ts';
import { processProvisioning, type ProvisionJob } from './provisioning.ts';
import { createRuntimeContext } from './runtime-context-system.ts';
import { observeAgents } from './agent-metrics-system.ts';

type Log = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

/**
 * The agents service's queue workers: provisioning (many at once: a job mostly waits for a
 * gateway to become ready) and the lifecycle queue: the reconciler, scheduled every RECONCILE_EVERY_MS,
 * and rebuilding containers from saved configurations.
 */
export async function startAgentWorkers(config: AgentsConfig, log: Log) {
  const context = createRuntimeContext(config, log);
  observeAgents(context.db, context.driver);
  const options = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log };
  const provisioning = startWorker<ProvisionJob, string>(QUEUES.provisioning, (job, token) => processProvisioning(context.runtime, job, token), { ...options, concurrency: 32 });
  const queues = createQueues(options);
  const lifecycle = startWorker<ConfigApplyJob | Record<string, never>, string>(QUEUES.lifecycle, async (job, token) => {
    if (job.name === 'apply-config') return processConfigApply(context.runtime, queues, job as Job<ConfigApplyJob>, token);
    if (job.name !== 'reconcile') return 'ignored';
    const { timedOut, orphans } = await context.runtime.reconcile(config.PROVISIONING_DEADLINE_MS);
    return `timed out ${timedOut.length}, orphans ${orphans.length}`;
  }, options);
  void context.runtime.topUpWarm();
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
