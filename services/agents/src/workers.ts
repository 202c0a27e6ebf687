import { workerLog, type WorkerDeps, type Workers } from '@agentyard/http';
import { parseKeyring } from '@agentyard/crypto';
import {
  keepRepeatingJobs,
  PLAN_ENFORCEMENT_JOB,
  QUEUES,
  redisConnection,
  startWorker,
  createQueues,
  UnrecoverableError,
  WAKE_AGENT_JOB,
  type Job,
  type PlanEnforcementJob,
  type WakeAgentJob,
} from '@agentyard/queue';
import type { AgentsConfig } from './config.ts';
import { APPLY_CONFIG_JOB, processConfigApply, type ConfigApplyJob } from './domain/runtime/config-apply.ts';
import { processProvisioning, PROVISION_JOB, type ProvisionJob } from './domain/runtime/provisioning.ts';
import { createRuntimeContext, type RuntimeContext } from './domain/runtime/privileged/runtime-context.ts';
import { startMetricsWorker } from './workers/metrics-sampling.ts';
import { observeAgents } from './domain/telemetry/privileged/fleet-gauges.ts';
import { enforcePlan } from './domain/runtime/plan-enforcement.ts';
import {
  SCHEDULED_SNAPSHOT_JOB,
  SNAPSHOT_SWEEP_JOB,
  TAKE_SNAPSHOT_JOB,
  type ScheduledSnapshotJob,
  type TakeSnapshotJob,
} from './domain/runtime/snapshots.ts';
import { AGENT_ACTION_JOB, processAgentAction, type AgentActionJob } from './domain/runtime/agent-actions.ts';
import { actionOutcomes } from './domain/telemetry/privileged/action-outcomes.ts';
import {
  CONTAINER_EVENT_JOB,
  WATCHDOG_RESTART_JOB,
  type ContainerEventJob,
  type WatchdogRestartJob,
} from './domain/telemetry/privileged/agent-watchdog.ts';
import { followEngineEvents } from './workers/engine-events.ts';
import { processSwarmRun } from './domain/settings/privileged/swarm-runs.ts';
import { SWARM_RUN_JOB, type SwarmRunJob } from './domain/settings/swarms.ts';
import { HIBERNATE_SWEEP_JOB } from './domain/runtime/privileged/hibernation.ts';

/** The lifecycle queue's scheduled job: containers that outlived their agent, provisioning past its deadline. */
export const RECONCILE_JOB = 'reconcile';

/**
 * The agents service's queue workers: provisioning (many at once: a job mostly waits for a
 * gateway to become ready) and the lifecycle queue: the reconciler, scheduled every RECONCILE_EVERY_MS,
 * rebuilding containers from saved configurations, the owners' web operations (start, stop, restart…), stopping the agents a plan no longer covers,
 * hibernation (the sweep every HIBERNATE_SWEEP_EVERY_MS and the wakes the scheduler asks for) and snapshots
 * (each taken on request, and every agent's scheduled one, found by a sweep every SNAPSHOT_SWEEP_EVERY_MS).
 */
export async function startWorkers(
  config: AgentsConfig,
  deps: WorkerDeps = {},
): Promise<Workers & { context: RuntimeContext }> {
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
  const reportOutcome = actionOutcomes(context.db);
  const engineEvents = await followEngineEvents(config, context, queues, log);
  const lifecycle = startWorker<
    | ConfigApplyJob
    | PlanEnforcementJob
    | TakeSnapshotJob
    | ScheduledSnapshotJob
    | AgentActionJob
    | ContainerEventJob
    | WatchdogRestartJob
    | WakeAgentJob
    | Record<string, never>,
    string
  >(
    QUEUES.lifecycle,
    async (job, token) => {
      switch (job.name) {
        case APPLY_CONFIG_JOB:
          return processConfigApply(context.runtime, queues, job as Job<ConfigApplyJob>, token);
        case AGENT_ACTION_JOB:
          return processAgentAction(context.runtime, job as Job<AgentActionJob>, token, reportOutcome);
        case PLAN_ENFORCEMENT_JOB:
          return enforcePlan(
            context,
            queues,
            (job as Job<PlanEnforcementJob>).data.userId,
            config.PLAN_GRACE_PERIOD_MS,
          );
        case TAKE_SNAPSHOT_JOB:
          return context.snapshots.take(
            (job as Job<TakeSnapshotJob>).data.snapshotId,
            job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
          );
        case SNAPSHOT_SWEEP_JOB:
          return context.snapshots.sweepScheduled(queues, config.SNAPSHOT_SCHEDULE_EVERY_MS);
        case SCHEDULED_SNAPSHOT_JOB:
          return context.snapshots.scheduled((job as Job<ScheduledSnapshotJob>).data.agentId);
        case RECONCILE_JOB: {
          // Before the provisioning deadline: a clone left half-seeded is seeded first (its deadline counts from then), never timed out as it is.
          const clones = await context.snapshots.finishClones(queues);
          const { timedOut, resumed, orphans } = await context.runtime.reconcile(config.PROVISIONING_DEADLINE_MS);
          // Exits no event reported (the process driver has none; a stream that was down) are found here too.
          const exited = await engineEvents.watchdog.catchUp();
          // Before abandoned snapshots: a dead restore's before-restore snapshot is its own to settle.
          const restores = await context.snapshots.finishRestores();
          for (const agentId of restores.toApply) await context.runtime.applyConfig(agentId);
          const abandoned = await context.snapshots.failAbandoned(queues, config.SNAPSHOT_ABANDONED_AFTER_MS);
          return `timed out ${timedOut.length}, resumed ${resumed.length}, orphans ${orphans.length}, exits found ${exited}, restores finished ${restores.finished.length}, rolled back ${restores.rolledBack.length}, abandoned snapshots ${abandoned}, clones finished ${clones.finished.length}, removed ${clones.removed.length}`;
        }
        case CONTAINER_EVENT_JOB:
          return engineEvents.watchdog.handle((job as Job<ContainerEventJob>).data);
        case WATCHDOG_RESTART_JOB:
          return engineEvents.watchdog.restart((job as Job<WatchdogRestartJob>).data);
        case HIBERNATE_SWEEP_JOB:
          return context.hibernation.sweep(queues);
        case WAKE_AGENT_JOB: {
          const woken = await context.hibernation.wake((job as Job<WakeAgentJob>).data.agentId);
          return woken.status;
        }
        default:
          throw new UnrecoverableError(`unknown lifecycle job ${job.name}`);
      }
    },
    // Owners' operations wait for gateways to answer, as provisioning does; operations on one agent still take turns (its lock).
    { ...options, concurrency: config.AGENTS_PROVISIONING_CONCURRENCY },
  );
  const metrics = await startMetricsWorker(config, context, queues, log);
  // Swarm runs wait on every member's turn: a queue of their own, so they never hold lifecycle slots.
  const spendRedis = redisConnection(
    config.REDIS_URL,
    { maxRetriesPerRequest: 1, commandTimeout: 1000 },
    { purpose: 'spend check', log },
  );
  const swarmContext = {
    db: context.db,
    keyring: parseKeyring(config.ENCRYPTION_KEYS),
    redis: spendRedis,
    queuePrefix: config.QUEUE_PREFIX,
    turnTimeoutMs: config.AGENT_CHAT_TIMEOUT_MS,
    maxAnswerBytes: config.AGENT_ANSWER_MAX_BYTES,
    hibernation: context.hibernation,
  };
  const swarms = startWorker<SwarmRunJob, string>(
    QUEUES.swarmRuns,
    (job) => {
      if (job.name !== SWARM_RUN_JOB) throw new UnrecoverableError(`unknown swarm-runs job ${job.name}`);
      return processSwarmRun(swarmContext, job.data.runId);
    },
    { ...options, concurrency: config.SWARM_RUN_CONCURRENCY },
  );
  void context.runtime.topUpWarm();
  // One sweep per period whatever the number of workers: the job scheduler's id is its deduplication.
  await keepRepeatingJobs(
    queues,
    [
      { queue: QUEUES.lifecycle, name: RECONCILE_JOB, everyMs: config.RECONCILE_EVERY_MS },
      {
        queue: QUEUES.lifecycle,
        name: HIBERNATE_SWEEP_JOB,
        everyMs: config.HIBERNATE_SWEEP_EVERY_MS,
        opts: { removeOnComplete: 100, removeOnFail: 100 },
      },
      {
        queue: QUEUES.lifecycle,
        name: SNAPSHOT_SWEEP_JOB,
        everyMs: config.SNAPSHOT_SWEEP_EVERY_MS,
        opts: { removeOnComplete: 100, removeOnFail: 100 },
      },
    ],
    log,
  );
  return {
    context,
    async close() {
      await engineEvents.close();
      await Promise.all([provisioning.close(), lifecycle.close(), metrics.close(), swarms.close()]);
      spendRedis.disconnect();
      await queues.close();
      await context.close();
    },
  };
}
