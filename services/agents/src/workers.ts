import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import { parseKeyring } from '@agentyard/crypto';
import {
  createQueues,
  keepRepeatingJobs,
  QUEUES,
  redisConnection,
  repeatingJobs,
  startJobWorkers,
} from '@agentyard/queue';
import type { AgentsConfig } from './config.ts';
import { createRuntimeContext, type RuntimeContext } from './domain/runtime/privileged/runtime-context.ts';
import { observeAgents } from './domain/telemetry/privileged/fleet-gauges.ts';
import { followEngineEvents } from './workers/engine-events.ts';
import { agentsJobs } from './workers/jobs.ts';

/**
 * The agents service's queue workers (`workers/jobs.ts` lists their jobs): provisioning, many at
 * once (a job mostly waits for a gateway to become ready); the lifecycle queue, its reconciler,
 * hibernation and snapshot sweeps repeating; metrics sampling every AGENT_METRICS_INTERVAL_MS;
 * swarm runs.
 */
export async function startWorkers(
  config: AgentsConfig,
  deps: WorkerDeps = {},
): Promise<Workers & { context: RuntimeContext }> {
  const log = workerLog('agents-worker', config, deps);
  const context = createRuntimeContext(config, log);
  observeAgents(context.db, context.driver);
  const options = { redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX, log };
  const queues = createQueues(options);
  const engineEvents = await followEngineEvents(config, context, queues, log);
  const spendRedis = redisConnection(
    config.REDIS_URL,
    { maxRetriesPerRequest: 1, commandTimeout: 1000 },
    { purpose: 'spend check', log },
  );
  const catalogue = agentsJobs({
    config,
    context,
    queues,
    watchdog: engineEvents.watchdog,
    swarms: {
      db: context.db,
      keyring: parseKeyring(config.ENCRYPTION_KEYS),
      redis: spendRedis,
      queuePrefix: config.QUEUE_PREFIX,
      turnTimeoutMs: config.AGENT_CHAT_TIMEOUT_MS,
      maxAnswerBytes: config.AGENT_ANSWER_MAX_BYTES,
      hibernation: context.hibernation,
    },
  });
  const jobs = startJobWorkers(catalogue, {
    ...options,
    concurrency: {
      [QUEUES.provisioning]: config.AGENTS_PROVISIONING_CONCURRENCY,
      // Owners' operations wait for gateways to answer, as provisioning does; operations on one agent still take turns (its lock).
      [QUEUES.lifecycle]: config.AGENTS_PROVISIONING_CONCURRENCY,
      // Swarm runs wait on every member's turn: a queue of their own, so they never hold lifecycle slots.
      [QUEUES.swarmRuns]: config.SWARM_RUN_CONCURRENCY,
    },
    bull: { [QUEUES.agentMetrics]: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
  });
  void context.runtime.topUpWarm();
  // One sweep per period whatever the number of workers: the job scheduler's id is its deduplication.
  await keepRepeatingJobs(queues, repeatingJobs(catalogue), log);
  return {
    context,
    async close() {
      await engineEvents.close();
      await jobs.close();
      spendRedis.disconnect();
      await queues.close();
      await context.close();
    },
  };
}
