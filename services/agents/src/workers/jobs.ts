import {
  defineJobs,
  PLAN_ENFORCEMENT_JOB,
  QUEUES,
  WAKE_AGENT_JOB,
  type Job,
  type PlanEnforcementJob,
  type QueueSet,
  type WakeAgentJob,
} from '@agentyard/queue';
import type { AgentsConfig } from '../config.ts';
import { AGENT_ACTION_JOB, processAgentAction, type AgentActionJob } from '../domain/runtime/agent-actions.ts';
import { APPLY_CONFIG_JOB, processConfigApply, type ConfigApplyJob } from '../domain/runtime/config-apply.ts';
import { enforcePlan } from '../domain/runtime/plan-enforcement.ts';
import { HIBERNATE_SWEEP_JOB } from '../domain/runtime/privileged/hibernation.ts';
import type { RuntimeContext } from '../domain/runtime/privileged/runtime-context.ts';
import { processProvisioning, PROVISION_JOB, type ProvisionJob } from '../domain/runtime/provisioning.ts';
import {
  SCHEDULED_SNAPSHOT_JOB,
  SNAPSHOT_SWEEP_JOB,
  TAKE_SNAPSHOT_JOB,
  type ScheduledSnapshotJob,
  type TakeSnapshotJob,
} from '../domain/runtime/snapshots.ts';
import { processSwarmRun, type SwarmRunContext } from '../domain/settings/privileged/swarm-runs.ts';
import { SWARM_RUN_JOB, type SwarmRunJob } from '../domain/settings/swarms.ts';
import { actionOutcomes } from '../domain/telemetry/privileged/action-outcomes.ts';
import {
  CONTAINER_EVENT_JOB,
  WATCHDOG_RESTART_JOB,
  type AgentWatchdog,
  type ContainerEventJob,
  type WatchdogRestartJob,
} from '../domain/telemetry/privileged/agent-watchdog.ts';
import { sampleAgentMetrics } from '../domain/telemetry/privileged/metrics-sampler.ts';

/** The lifecycle queue's scheduled job: containers that outlived their agent, provisioning past its deadline. */
export const RECONCILE_JOB = 'reconcile';
/** The agent-metrics queue's scheduled job: one pass of stats calls over every running agent's container. */
export const SAMPLE_METRICS_JOB = 'sample-metrics';

export interface AgentsJobsContext {
  config: AgentsConfig;
  context: RuntimeContext;
  queues: QueueSet;
  watchdog: AgentWatchdog;
  swarms: SwarmRunContext;
}

/** A sweep's last 100 completed and 100 failed runs stay in Redis to look at; older ones go. */
const KEEP_LAST_100 = { removeOnComplete: 100, removeOnFail: 100 };

/**
 * Every job the agents service's workers run: provisioning; the lifecycle queue's reconciler,
 * rebuilds from saved configurations, owners' operations (start, stop, restart…), plan enforcement,
 * the watchdog's container events and restarts, hibernation (its sweep, the scheduler's wakes) and
 * snapshots (each taken on request, every agent's scheduled one found by a sweep); metrics sampling;
 * swarm runs.
 */
export function agentsJobs({ config, context, queues, watchdog, swarms }: AgentsJobsContext) {
  const reportOutcome = actionOutcomes(context.db);
  return defineJobs({
    [PROVISION_JOB]: {
      queue: QUEUES.provisioning,
      run: (job: Job<ProvisionJob>, token) => processProvisioning(context.runtime, job, token),
    },
    [APPLY_CONFIG_JOB]: {
      queue: QUEUES.lifecycle,
      run: (job: Job<ConfigApplyJob>, token) => processConfigApply(context.runtime, queues, job, token),
    },
    [AGENT_ACTION_JOB]: {
      queue: QUEUES.lifecycle,
      run: (job: Job<AgentActionJob>, token) => processAgentAction(context.runtime, job, token, reportOutcome),
    },
    [PLAN_ENFORCEMENT_JOB]: {
      queue: QUEUES.lifecycle,
      run: (job: Job<PlanEnforcementJob>) => enforcePlan(context, queues, job.data.userId, config.PLAN_GRACE_PERIOD_MS),
    },
    [TAKE_SNAPSHOT_JOB]: {
      queue: QUEUES.lifecycle,
      run: (job: Job<TakeSnapshotJob>) =>
        context.snapshots.take(job.data.snapshotId, job.attemptsMade + 1 >= (job.opts.attempts ?? 1)),
    },
    [SNAPSHOT_SWEEP_JOB]: {
      queue: QUEUES.lifecycle,
      run: (_job: Job<Record<string, never>>) =>
        context.snapshots.sweepScheduled(queues, config.SNAPSHOT_SCHEDULE_EVERY_MS),
      repeat: { everyMs: config.SNAPSHOT_SWEEP_EVERY_MS, opts: KEEP_LAST_100 },
    },
    [SCHEDULED_SNAPSHOT_JOB]: {
      queue: QUEUES.lifecycle,
      run: (job: Job<ScheduledSnapshotJob>) => context.snapshots.scheduled(job.data.agentId),
    },
    [RECONCILE_JOB]: {
      queue: QUEUES.lifecycle,
      run: (_job: Job<Record<string, never>>) => reconcile({ config, context, queues, watchdog }),
      repeat: { everyMs: config.RECONCILE_EVERY_MS },
    },
    [CONTAINER_EVENT_JOB]: { queue: QUEUES.lifecycle, run: (job: Job<ContainerEventJob>) => watchdog.handle(job.data) },
    [WATCHDOG_RESTART_JOB]: {
      queue: QUEUES.lifecycle,
      run: (job: Job<WatchdogRestartJob>) => watchdog.restart(job.data),
    },
    [HIBERNATE_SWEEP_JOB]: {
      queue: QUEUES.lifecycle,
      run: (_job: Job<Record<string, never>>) => context.hibernation.sweep(queues),
      repeat: { everyMs: config.HIBERNATE_SWEEP_EVERY_MS, opts: KEEP_LAST_100 },
    },
    [WAKE_AGENT_JOB]: {
      queue: QUEUES.lifecycle,
      run: async (job: Job<WakeAgentJob>) => (await context.hibernation.wake(job.data.agentId)).status,
    },
    [SAMPLE_METRICS_JOB]: {
      queue: QUEUES.agentMetrics,
      run: async (_job: Job<Record<string, never>>) => {
        const pass = await sampleAgentMetrics(context.db, context.driver, config.AGENT_METRICS_CONCURRENCY);
        return `sampled ${pass.sampled}, running ${pass.running}`;
      },
      repeat: { everyMs: config.AGENT_METRICS_INTERVAL_MS },
    },
    [SWARM_RUN_JOB]: {
      queue: QUEUES.swarmRuns,
      run: (job: Job<SwarmRunJob>) => processSwarmRun(swarms, job.data.runId),
    },
  });
}

/** One reconcile pass: what went wrong while no one was looking (dead workers, missed events) is put right. */
async function reconcile({ config, context, queues, watchdog }: Omit<AgentsJobsContext, 'swarms'>): Promise<string> {
  // Before the provisioning deadline: a clone left half-seeded is seeded first (its deadline counts from then), never timed out as it is.
  const clones = await context.snapshots.finishClones(queues);
  const { timedOut, resumed, orphans } = await context.runtime.reconcile(config.PROVISIONING_DEADLINE_MS);
  // Exits no event reported (the process driver has none; a stream that was down) are found here too.
  const exited = await watchdog.catchUp();
  // Before abandoned snapshots: a dead restore's before-restore snapshot is its own to settle.
  const restores = await context.snapshots.finishRestores();
  for (const agentId of restores.toApply) await context.runtime.applyConfig(agentId);
  const abandoned = await context.snapshots.failAbandoned(queues, config.SNAPSHOT_ABANDONED_AFTER_MS);
  return `timed out ${timedOut.length}, resumed ${resumed.length}, orphans ${orphans.length}, exits found ${exited}, restores finished ${restores.finished.length}, rolled back ${restores.rolledBack.length}, abandoned snapshots ${abandoned}, clones finished ${clones.finished.length}, removed ${clones.removed.length}`;
}
