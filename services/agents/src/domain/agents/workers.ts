import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import { QUEUES, startWorker, createQueues, UnrecoverableError, type Job } from '@agentyard/queue';
import type { AgentsConfig } from '../../config.ts';
import { APPLY_CONFIG_JOB, processConfigApply, type ConfigApplyJob } from './config-apply.ts';
import { processProvisioning, PROVISION_JOB, type ProvisionJob } from './provisioning.ts';
import { createRuntimeContext, type RuntimeContext } from './runtime-context-system.ts';
import { startMetricsWorker } from '../agent-workspace/metrics-worker.ts';
import { observeAgents } from './agent-metrics-system.ts';

/** The lifecycle queue's scheduled job: containers that outlived their agent, provisioning past its deadline. */
export const RECONCILE_JOB = 'reconcile';

/**
 * The agents service's queue workers: provisioning (many at once: a job mostly waits for a
 * gateway to become ready) and the lifecycle queue: the reconciler, scheduled every RECONCILE_EVERY_MS,
 * and rebuilding containers from saved configurations.
 */
export async function startWorkers(config: AgentsConfig, deps: WorkerDeps = {}): Promise<Workers & { context: RuntimeContext }> {
  const log = workerLog('agents-worker', config, deps);
  const context = createRuntimeContext(config, log);
  observeAgents(context.db, context.driver);
  const options = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log };
  const provisioning = startWorker<ProvisionJob, string>(
    QUEUES.provisioning,
    (job, token) => {
      if (job.name !== PROVISION_JOB) throw new UnrecoverableError(`unknown provisioning job ${job.name}`);
      return processProvisioning(context.runtime, job, token);
    },
    { ...options, concurrency: config.AGENTS_PROVISIONING_CONCURRENCY },
  );
  const queues = createQueues(options);
  const lifecycle = startWorker<ConfigApplyJob | Record<string, never>, string>(
    QUEUES.lifecycle,
    async (job, token) => {
      switch (job.name) {
        case APPLY_CONFIG_JOB:
          return processConfigApply(context.runtime, queues, job as Job<ConfigApplyJob>, token);
        case RECONCILE_JOB: {
          const { timedOut, orphans } = await context.runtime.reconcile(config.PROVISIONING_DEADLINE_MS);
          return `timed out ${timedOut.length}, orphans ${orphans.length}`;
        }
        default:
          throw new UnrecoverableError(`unknown lifecycle job ${job.name}`);
      }
    },
    options,
  );
  const metrics = await startMetricsWorker(config, context, queues, log);
  void context.runtime.topUpWarm();
  await queues.get(QUEUES.lifecycle).upsertJobScheduler(RECONCILE_JOB, { every: config.RECONCILE_EVERY_MS }, { name: RECONCILE_JOB, data: {} });
  return {
    context,
    async close() {
      await Promise.all([provisioning.close(), lifecycle.close(), metrics.close()]);
      await queues.close();
      await context.close();
    },
  };
}
