import { keepRepeatingJobs, QUEUES, startWorker, UnrecoverableError, type createQueues } from '@agentyard/queue';
import type { AgentsConfig } from '../config.ts';
import type { RuntimeContext } from '../domain/runtime/privileged/runtime-context.ts';
import { sampleAgentMetrics } from '../domain/telemetry/privileged/metrics-sampler.ts';

type Log = {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

export const SAMPLE_METRICS_JOB = 'sample-metrics';

/**
 * Samples every running agent's container every AGENT_METRICS_INTERVAL_MS: one job scheduler (a
 * repeatable job: one pass at a time across every worker process), each pass a batch of stats calls.
 */
export async function startMetricsWorker(
  config: AgentsConfig,
  context: RuntimeContext,
  queues: ReturnType<typeof createQueues>,
  log: Log,
) {
  const worker = startWorker<Record<string, never>, string>(
    QUEUES.agentMetrics,
    async (job) => {
      if (job.name !== SAMPLE_METRICS_JOB) throw new UnrecoverableError(`unknown job ${job.name}`);
      const pass = await sampleAgentMetrics(context.db, context.driver, config.AGENT_METRICS_CONCURRENCY);
      return `sampled ${pass.sampled}, running ${pass.running}`;
    },
    {
      redisUrl: config.REDIS_URL,
      prefix: config.QUEUE_PREFIX,
      log,
      bull: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
    },
  );
  await keepRepeatingJobs(
    queues,
    [{ queue: QUEUES.agentMetrics, name: SAMPLE_METRICS_JOB, everyMs: config.AGENT_METRICS_INTERVAL_MS }],
    log,
  );
  return worker;
}
