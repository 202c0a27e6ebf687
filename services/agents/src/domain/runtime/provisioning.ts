import { lookAgainLater, QUEUES, UnrecoverableError, type Job, type QueueSet } from '@agentyard/queue';
import { metrics } from '@agentyard/observability';
import { HttpError } from '@agentyard/http';
import { isAgentBusy } from '../../errors.ts';
import type { AgentRuntime } from './privileged/agent-runtime.ts';
import { AGENT_FAILURES } from '../agents/agent-views.ts';

/** The statuses of an agent its provisioning job has still to finish. */
const BEING_PROVISIONED: ReadonlySet<string> = new Set(['pending', 'provisioning', 'deploying']);

export interface ProvisionJob {
  agentId: string;
}

/** The provisioning queue's one job name. */
export const PROVISION_JOB = 'provision';

export const provisionJobId = (agentId: string) => `provision-${agentId}`;

/** One provisioning job per agent (its id is the dedup key); the data holds no secret. */
export async function enqueueProvisioning(queues: QueueSet, agentId: string): Promise<void> {
  await queues.add(QUEUES.provisioning, PROVISION_JOB, { agentId } satisfies ProvisionJob, {
    jobId: provisionJobId(agentId),
    attempts: 3,
  });
}

/** Queues the agent's provisioning. Without a job it would never move: if it cannot be queued, the agent ends in error and the failure is thrown. */
export async function queueProvisioning(queues: QueueSet, runtime: AgentRuntime, agentId: string): Promise<void> {
  try {
    await enqueueProvisioning(queues, agentId);
  } catch (error) {
    await runtime.failDeployment(agentId, AGENT_FAILURES.notQueued, (error as Error).message);
    throw error;
  }
}

const FINISHED = new Set(['completed', 'failed', 'unknown']);

/** The gateway started but never answered /readyz within the deadline. */
class NotReadyError extends Error {
  constructor() {
    super('the gateway did not become ready in time');
  }
}

/** Whether the agent's provisioning job has still to finish (queued, waiting for a retry, or running). */
export async function provisioningUnderWay(queues: QueueSet, agentId: string): Promise<boolean> {
  return !FINISHED.has(await queues.get(QUEUES.provisioning).getJobState(provisionJobId(agentId)));
}

/**
 * Moves a `pending`/`provisioning`/`deploying` agent to `running` once its gateway answers /readyz, or to
 * `error` (container removed, port freed) when the last attempt fails. Idempotent: an agent in any
 * other state, or deleted, is left alone; a container already made is reused. While another
 * operation on the agent is under way the job looks again every `recheckMs` without spending an attempt.
 */
export async function processProvisioning(
  runtime: AgentRuntime,
  job: Job<ProvisionJob>,
  token: string | undefined,
  recheckMs = 2000,
): Promise<string> {
  const { agentId } = job.data;
  const agent = await runtime.load(agentId);
  if (!agent) return 'deleted';
  if (!BEING_PROVISIONED.has(agent.status)) return `skipped (${agent.status})`;
  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const phase = (name: string, since: number) =>
    metrics.provisioningPhase().observe({ phase: name }, (performance.now() - since) / 1000);
  try {
    if (job.attemptsMade === 0 && job.processedOn)
      metrics.provisioningPhase().observe({ phase: 'queued' }, Math.max(0, job.processedOn - job.timestamp) / 1000);
    const started = performance.now();
    const deployed = await runtime.deploy(agentId);
    phase('container', started);
    const current = await runtime.load(agentId);
    if (!current) return 'deleted';
    // Stopped meanwhile (its owner's plan ended): it stays as that left it.
    if (!BEING_PROVISIONED.has(current.status)) return `stopped meanwhile (${current.status})`;
    const deployedAt = performance.now();
    const ready = await runtime.waitUntilServing(current, deployed);
    const now = await runtime.load(agentId);
    if (!now) return 'deleted';
    if (!BEING_PROVISIONED.has(now.status)) return `stopped meanwhile (${now.status})`;
    if (!ready) throw new NotReadyError();
    phase('gateway-ready', deployedAt);
    await runtime.setStatus(agentId, 'running');
    phase('total', started);
    await runtime.recordUserRuntime(agentId);
    return deployed.created ? 'running (new container)' : 'running';
  } catch (error) {
    if (isAgentBusy(error)) return lookAgainLater(job, token, recheckMs);
    // The owner's plan does not cover the agent (it ended, or went down, since it was asked for): no retry changes that.
    if (error instanceof HttpError && [402, 403, 429].includes(error.statusCode)) {
      await runtime.failDeployment(agentId, AGENT_FAILURES.planEnded, error.message);
      return 'refused by the plan';
    }
    const reason = (error as { statusCode?: number }).statusCode === 404 ? null : (error as Error).message;
    if (reason === null) throw new UnrecoverableError('agent deleted during provisioning');
    if (lastAttempt) {
      await runtime.failDeployment(
        agentId,
        error instanceof NotReadyError ? AGENT_FAILURES.notReady : AGENT_FAILURES.containerFailed,
        `Provisioning failed: ${reason}`,
      );
      return 'error';
    }
    throw error;
  }
}
