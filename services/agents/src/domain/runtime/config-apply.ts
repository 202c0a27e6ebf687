import { lookAgainLater, QUEUES, type Job, type QueueSet } from '@agentyard/queue';
import { isAgentBusy } from '../../errors.ts';
import type { AgentRuntime } from './privileged/agent-runtime.ts';
import { provisioningUnderWay } from './provisioning.ts';
import type { ReloadKind } from '../gateway/config-reload.ts';

export interface ConfigApplyJob {
  agentId: string;
  /** How the save was answered it would apply (absent in jobs queued before there was a choice: a rebuild). */
  reload?: ReloadKind;
}

/** The lifecycle queue's job giving a container its saved configuration (in place, or by a rebuild). */
export const APPLY_CONFIG_JOB = 'apply-config';

/** The job applying the configuration saved at `savedAt` (the time as stored, or as a save answered it). */
export const configApplyJobId = (agentId: string, savedAt: Date | string) =>
  `apply-config-${agentId}-${new Date(savedAt).getTime()}`;

/** One job per saved configuration (the save time is in its id), so a retried save is not applied twice; no secret in it. */
export async function enqueueConfigApply(
  queues: QueueSet,
  agentId: string,
  savedAt: Date,
  reload: ReloadKind = 'restart',
): Promise<void> {
  await queues.add(QUEUES.lifecycle, APPLY_CONFIG_JOB, { agentId, reload } satisfies ConfigApplyJob, {
    jobId: configApplyJobId(agentId, savedAt),
  });
}

/**
 * Gives the agent's container its stored configuration (runtime.applyConfig). While the agent's provisioning job
 * has still to finish (it may have read the configuration before it was saved), or another
 * operation on the agent is under way, the job waits and looks again every `recheckMs`, without
 * spending an attempt. An agent that is not provisioned has no container: its first one reads the
 * configuration saved by then.
 */
export async function processConfigApply(
  runtime: AgentRuntime,
  queues: QueueSet,
  job: Job<ConfigApplyJob>,
  token: string | undefined,
  recheckMs = 2000,
): Promise<string> {
  const agent = await runtime.load(job.data.agentId);
  if (!agent) return 'deleted';
  if (await provisioningUnderWay(queues, agent.id)) return lookAgainLater(job, token, recheckMs);
  try {
    return await runtime.applyConfig(agent.id, job.data.reload ?? 'restart');
  } catch (error) {
    if (isAgentBusy(error)) return lookAgainLater(job, token, recheckMs);
    throw error;
  }
}
